//! `vkskin generate`: the bundled figure's files, or the load-time checks' larger ones.

use std::path::PathBuf;

use vkskin::generate::long_clip::{long_clip, FRAME_RATE, JOINTS, SECONDS};

use crate::cli::GenerateArgs;

pub(crate) fn generate(arguments: GenerateArgs) -> Result<(), String> {
    let GenerateArgs { out_dir: out, long_clip: write_long_clip, subdivide } = arguments;
    std::fs::create_dir_all(&out).map_err(|error| format!("cannot create {}: {error}", out.display()))?;
    let write = |path: &PathBuf, bytes: &[u8]| {
        std::fs::write(path, bytes).map_err(|error| format!("cannot write {}: {error}", path.display()))
    };
    let mut written = Vec::new();
    if write_long_clip {
        let path = out.join("long_clip.ms3d");
        write(&path, &vkskin::formats::ms3d::write(&long_clip(JOINTS, SECONDS, FRAME_RATE)))?;
        written.push(path);
    } else {
        written =
            vkskin::generate::write_assets(&out).map_err(|error| format!("cannot write into {}: {error}", out.display()))?;
        if let Some(times) = subdivide {
            let figure = vkskin::generate::figure();
            let dense = vkskin::generate::dense::subdivided(&figure.mesh, times);
            // The figure's clips beside it, named so that they are found as the figure's are.
            let mut files = vec![("figure_dense.md5mesh".to_string(), vkskin::formats::md5::write_mesh(&dense))];
            for (name, anim) in vkskin::generate::animation_files(&figure) {
                files.push((name.replace("figure_", "figure_dense_"), vkskin::formats::md5::write_anim(anim)));
            }
            for (name, text) in files {
                let path = out.join(name);
                write(&path, text.as_bytes())?;
                written.push(path);
            }
        }
    }
    for path in written {
        println!("wrote {}", path.display());
    }
    Ok(())
}
