//! Link settings of the extension library.
//!
//! On Linux the library is linked `-z nodelete`: Godot closes extension libraries when it shuts
//! down, and glibc then unmaps ours while rayon's worker threads may still be running its code
//! (they spin a little before they sleep, longer on a busy machine). A headless `bake.gd` run then
//! ended with a segmentation fault after it had saved its file (exit status 139, in 9 of 15 runs
//! with both cores busy). Kept loaded, the library goes with the process.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    }
}
