//! Empty on purpose: this crate exists for its build script's link directives. vkskin's build.rs
//! names it (`use shaderc_link as _;`) so that rustc keeps it, and with it the archives, in the link.
