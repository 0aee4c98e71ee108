//! How far clips carried from one file to another character are from their source (issue 39):
//! for each clip of SOURCE carried onto TARGET's skeleton, the angle between each bone of the
//! source playing it and the same bone of the target playing the carried clip, the body's facing
//! taken out (`vkskin::anim::retarget::compare`), over 48 times of the clip.
//!
//!     cargo run --release --example retarget_angles -- SOURCE TARGET
//!
//! Prints a line a clip: bones compared, median and worst angle (and the worst bone), and the same
//! between the two rests. `scripts/retarget-table` runs it over pairs of one rig family.

use std::path::Path;

use vkskin::anim::retarget::compare::bone_angles;
use vkskin::anim::retarget::retarget;
use vkskin::formats::read_model;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [source, target] = arguments.as_slice() else {
        eprintln!("usage: retarget_angles SOURCE TARGET");
        std::process::exit(2);
    };
    if let Err(message) = run(Path::new(source), Path::new(target)) {
        eprintln!("retarget_angles: {message}");
        std::process::exit(1);
    }
}

fn run(source: &Path, target: &Path) -> Result<(), String> {
    let source = read_model(source, &[]).map_err(|error| error.to_string())?;
    let target = read_model(target, &[]).map_err(|error| error.to_string())?;
    // Turned from the source's front to the target's, as `--anim` carries them.
    let facing = vkskin::anim::retarget::facing_turn(source.facing_yaw(), target.facing_yaw());
    let carried = retarget(&source.skeleton, &source.animations, &target.skeleton, facing)?;
    for clip in (0..source.clips.len()).filter(|&clip| source.clip_moves(clip)) {
        let (animation, converted) =
            (&source.animations[source.clips[clip].animation], &carried.animations[source.clips[clip].animation]);
        let span = &source.clips[clip];
        let times: Vec<f32> = (0..48).map(|step| span.start + span.duration * step as f32 / 48.0).collect();
        match bone_angles(&source.skeleton, animation, &target.skeleton, converted, &times) {
            Some(angles) => println!(
                "{}\t{}\tmedian {:.2}\tworst {:.2}\t({})\trest median {:.2}\trest worst {:.2}",
                span.name, angles.bones, angles.median, angles.worst, angles.worst_bone, angles.rest_median, angles.rest_worst
            ),
            None => println!("{}\tno bone matched on both sides", span.name),
        }
    }
    Ok(())
}
