//! The bundled figure with its MD5 weights spread apart (`vkskin::generate::spread_weights`), for
//! measuring what skinning MD5's way costs (docs/md5.md):
//!
//!     cargo run --release --example spread_weights -- FOLDER [SPREAD]
//!
//! writes FOLDER/figure.md5mesh (weights SPREAD apart, model units; default 0.072, 4 % of the
//! figure's height) beside copies of the figure's clips and texture.

use std::path::PathBuf;

use vkskin::formats::md5;
use vkskin::generate::spread_weights::spread_weights;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (Some(folder), spread) = (arguments.first(), arguments.get(1)) else {
        eprintln!("usage: spread_weights FOLDER [SPREAD]");
        std::process::exit(2);
    };
    let Ok(spread) = spread.map_or(Ok(0.072), |spread| spread.parse::<f32>()) else {
        eprintln!("spread_weights: SPREAD must be a number");
        std::process::exit(2);
    };
    let folder = PathBuf::from(folder);
    let figure = vkskin::generate::figure();
    let written = vkskin::generate::write_assets(&folder).unwrap_or_else(|error| {
        eprintln!("spread_weights: cannot write into {}: {error}", folder.display());
        std::process::exit(1);
    });
    let mesh = folder.join("figure.md5mesh");
    if let Err(error) = std::fs::write(&mesh, md5::write_mesh(&spread_weights(&figure.mesh, spread))) {
        eprintln!("spread_weights: cannot write {}: {error}", mesh.display());
        std::process::exit(1);
    }
    println!("wrote {} (weights {spread} apart) and {} more files", mesh.display(), written.len() - 1);
}
