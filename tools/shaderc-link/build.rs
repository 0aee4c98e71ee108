//! Debian 12 ships a `libshaderc_combined.a` that is not combined: glslang and SPIRV-Tools are
//! separate archives (packages glslang-dev, spirv-tools). Link them after shaderc, inside one
//! group so their mutual references resolve whatever order rustc places them in.

fn main() {
    let directory = std::env::var("SHADERC_LIB_DIR").unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu".to_string());
    println!("cargo:rerun-if-env-changed=SHADERC_LIB_DIR");
    println!("cargo:rustc-link-search=native={directory}");
    for library in [
        "glslang",
        "SPIRV",
        "MachineIndependent",
        "OSDependent",
        "GenericCodeGen",
        "OGLCompiler",
        "HLSL",
        "glslang-default-resource-limits",
        "SPIRV-Tools-opt",
        "SPIRV-Tools",
    ] {
        let archive = format!("{directory}/lib{library}.a");
        if std::path::Path::new(&archive).exists() {
            println!("cargo:rustc-link-lib=static:-bundle={library}");
        }
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
