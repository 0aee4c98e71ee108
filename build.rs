//! Compiles every `shaders/<pass>.<stage>.glsl` to SPIR-V in OUT_DIR and writes `shaders.rs`, which
//! embeds them as `<PASS>_<STAGE>: &[u8]`. A line `// variant: NAME` in a shader asks for a second
//! build with NAME defined, embedded as `<PASS>_<STAGE>_<NAME>` (the forward pass's shaders with and
//! without the velocity target); `// variant: A+B` defines both, embedded as `<PASS>_<STAGE>_A_B`. Files without a stage (`shaders/*.glsl` like `common.glsl`) are
//! include files. A compile error fails the build with the file and line.
//!
//! The compiler is shaderc's `glslc`, run as a program rather than linked: the Vulkan SDK ships it
//! on Windows and macOS and Debian packages it, so every system finds it the same way, and the build
//! links no C++ library. It is looked for in `GLSLC` (a path), then in the Vulkan SDK's `bin`
//! folder (`VULKAN_SDK`, which the SDK's installer sets), then on `PATH`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn stage_of(file_name: &str) -> Option<(String, &'static str)> {
    let stem = file_name.strip_suffix(".glsl")?;
    let (pass, stage) = stem.rsplit_once('.')?;
    matches!(stage, "comp" | "vert" | "frag" | "geom").then(|| (format!("{pass}.{stage}"), stage_name(stage)))
}

fn stage_name(stage: &str) -> &'static str {
    match stage {
        "comp" => "compute",
        "vert" => "vertex",
        "frag" => "fragment",
        _ => "geometry",
    }
}

/// Where glslc is, and where it was looked for when it is nowhere.
fn find_glslc() -> Result<PathBuf, String> {
    println!("cargo:rerun-if-env-changed=GLSLC");
    println!("cargo:rerun-if-env-changed=VULKAN_SDK");
    let program = if cfg!(windows) { "glslc.exe" } else { "glslc" };
    let mut tried = Vec::new();
    if let Some(path) = std::env::var_os("GLSLC").filter(|path| !path.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    if let Some(sdk) = std::env::var_os("VULKAN_SDK") {
        // The SDK's folder is `Bin` on Windows and `bin` elsewhere.
        for folder in ["Bin", "bin"] {
            let path = Path::new(&sdk).join(folder).join(program);
            if path.is_file() {
                return Ok(path);
            }
            tried.push(path.display().to_string());
        }
    }
    if Command::new(program).arg("--version").output().is_ok_and(|output| output.status.success()) {
        return Ok(PathBuf::from(program));
    }
    tried.push(format!("{program} on PATH"));
    Err(format!(
        "the shaders need shaderc's compiler, glslc, and it was not found (looked for {}).\n\
         Install it:\n\
         - Windows or macOS: the Vulkan SDK from https://vulkan.lunarg.com (its installer sets VULKAN_SDK), then open a new terminal;\n\
         - Debian or Ubuntu: `scripts/install-deps` (or `apt-get install glslc`);\n\
         - elsewhere: shaderc built from source (https://github.com/google/shaderc), with GLSLC=/path/to/glslc.",
        tried.join(", ")
    ))
}

fn main() {
    let shader_dir = Path::new("shaders");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=shaders");
    let glslc = find_glslc().unwrap_or_else(|message| {
        eprintln!("error: {message}");
        std::process::exit(1);
    });

    let mut entries: Vec<PathBuf> = std::fs::read_dir(shader_dir)
        .expect("the shaders/ folder exists")
        .map(|entry| entry.expect("shaders/ is readable").path())
        .collect();
    entries.sort();

    // Every shader and variant compiled at once, one glslc each; read back in order.
    let mut jobs: Vec<(String, PathBuf, std::thread::JoinHandle<std::io::Result<Output>>)> = Vec::new();
    for path in &entries {
        println!("cargo:rerun-if-changed={}", path.display());
        let file_name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        let Some((name, stage)) = stage_of(file_name) else { continue };
        let source = std::fs::read_to_string(path).expect("shader source is readable UTF-8");
        let variants: Vec<String> = source
            .lines()
            .filter_map(|line| line.trim().strip_prefix("// variant: "))
            .map(|variant| variant.trim().to_string())
            .collect();
        for variant in std::iter::once(None).chain(variants.into_iter().map(Some)) {
            let mut name = name.clone();
            let mut command = Command::new(&glslc);
            // SPIR-V 1.5 runs on Vulkan 1.2 too: RenderDoc 1.24 makes lavapipe report 1.2. Always
            // `-g`: names and source in RenderDoc captures, and the layout test reads member names
            // from the SPIR-V. Drivers drop debug instructions, so it costs nothing at run time.
            command.args(["--target-env=vulkan1.2", "-O", "-g", &format!("-fshader-stage={stage}")]);
            command.arg("-I").arg(shader_dir);
            // A variant of several names (`VELOCITY+RAY_SHADOWS`) defines each.
            if let Some(variant) = &variant {
                for define in variant.split('+') {
                    command.arg(format!("-D{}=1", define.trim()));
                }
                name = format!("{name}.{}", variant.replace('+', "_").to_lowercase());
            }
            let spv_path = out_dir.join(format!("{name}.spv"));
            command.arg("-o").arg(&spv_path).arg(path);
            jobs.push((name, spv_path, std::thread::spawn(move || command.output())));
        }
    }

    let mut embedded = String::from("// Generated by build.rs from shaders/: do not edit.\n");
    let mut failures = Vec::new();
    for (name, spv_path, job) in jobs {
        let output = job.join().expect("a glslc thread does not panic");
        match output {
            Ok(output) if output.status.success() => {
                let warnings = String::from_utf8_lossy(&output.stderr);
                if !warnings.trim().is_empty() {
                    println!("cargo:warning={}", warnings.trim().replace('\n', " | "));
                }
                let constant = name.replace('.', "_").to_uppercase();
                writeln!(embedded, "pub const {constant}: &[u8] = include_bytes!({:?});", spv_path.display().to_string())
                    .expect("writing to a String");
            }
            Ok(output) => failures.push(String::from_utf8_lossy(&output.stderr).trim().to_string()),
            Err(error) => failures.push(format!("{name}: cannot run {}: {error}", glslc.display())),
        }
    }
    if !failures.is_empty() {
        for failure in &failures {
            eprintln!("{failure}");
        }
        eprintln!("{} shader(s) failed to compile", failures.len());
        std::process::exit(1);
    }
    std::fs::write(out_dir.join("shaders.rs"), embedded).expect("OUT_DIR is writable");
}
