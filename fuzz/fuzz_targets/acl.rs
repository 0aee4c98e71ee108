//! ACL's clip format from text: the SJSON reader, then the clip, then its model's culling cells.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("fuzz.acl.sjson");
    if let Ok(root) = vkskin::formats::acl::sjson::parse(&text, path) {
        if let Ok(model) = vkskin::formats::acl::to_model(&root, path) {
            let _ = model.cell_bounds();
        }
    }
});
