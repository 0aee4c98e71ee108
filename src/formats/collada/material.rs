//! `<material>` → `<instance_effect>` → `<effect><profile_COMMON>`: the diffuse colour, or the
//! diffuse texture through `<sampler2D>` → `<surface>` → `<image>` → `init_from` (a relative path,
//! a `file://` URI, URL-escaped). A texture that cannot be had is a warning, as in the other
//! formats.

use std::path::Path;

use glam::Vec4;
use roxmltree::Node;

use super::document::Document;
use crate::formats::{files, texture, FormatError};
use crate::model::Material;

pub fn read(
    document: &Document<'_, '_>,
    material: Node<'_, '_>,
    folder: &Path,
    textures: &mut texture::Library,
    warnings: &mut Vec<String>,
) -> Result<Material, FormatError> {
    let name = material.attribute("name").or(material.attribute("id")).unwrap_or("material").to_string();
    let mut result = Material::untextured(name.clone());
    let Some(instance) = document.child(material, "instance_effect") else { return Ok(result) };
    let effect = document.lookup(instance, document.attribute(instance, "url")?)?;
    let Some(diffuse) = effect.descendants().find(|node| node.has_tag_name("diffuse")) else { return Ok(result) };
    if let Some(color) = document.child(diffuse, "color") {
        let values = document.floats(color)?;
        if let [r, g, b, ref rest @ ..] = values[..] {
            result.base_color = Vec4::new(r, g, b, rest.first().copied().unwrap_or(1.0));
        }
    }
    if let Some(texture) = document.child(diffuse, "texture") {
        result.base_color = Vec4::ONE;
        match image_path(document, effect, texture, folder) {
            Ok(path) => match textures.describe_file(&path) {
                Ok(described) => result.texture = Some(described),
                Err(reason) => warnings.push(format!(
                    "material {}: texture {}: {reason}; drawn without it",
                    files::quoted(&name),
                    path.display()
                )),
            },
            Err(reason) => warnings.push(format!("material {}: {reason}; drawn without its texture", files::quoted(&name))),
        }
    }
    Ok(result)
}

/// The file a `<texture texture="sampler">` reads, through the effect's newparams (COLLADA 1.4)
/// or straight to an `<image>` id (what some exporters write).
fn image_path(
    document: &Document<'_, '_>,
    effect: Node<'_, '_>,
    texture: Node<'_, '_>,
    folder: &Path,
) -> Result<std::path::PathBuf, String> {
    let sampler_sid = texture.attribute("texture").ok_or("a <texture> without a texture attribute")?;
    let newparam =
        |sid: &str| effect.descendants().find(|node| node.has_tag_name("newparam") && node.attribute("sid") == Some(sid));
    let image_id = match newparam(sampler_sid) {
        Some(param) => {
            let sampler = param
                .descendants()
                .find(|node| node.has_tag_name("sampler2D"))
                .ok_or("a sampler newparam without <sampler2D>")?;
            let source =
                sampler.descendants().find(|node| node.has_tag_name("source")).and_then(|node| node.text()).map(str::trim);
            let surface_image = source
                .and_then(newparam)
                .and_then(|surface| surface.descendants().find(|node| node.has_tag_name("init_from")))
                .and_then(|init| init.text());
            // COLLADA 1.5: <sampler2D><instance_image url="#id"/>.
            let instance =
                sampler.descendants().find(|node| node.has_tag_name("instance_image")).and_then(|node| node.attribute("url"));
            surface_image.or(instance).ok_or("a sampler without a surface or image")?.trim().trim_start_matches('#').to_string()
        }
        None => sampler_sid.to_string(),
    };
    let image = document.lookup(texture, &image_id).map_err(|error| error.message)?;
    let init = image.descendants().find(|node| node.has_tag_name("init_from")).ok_or("an <image> without init_from")?;
    // 1.5 puts the path in <init_from><ref>.
    let written =
        init.children().find(|node| node.has_tag_name("ref")).and_then(|node| node.text()).or(init.text()).unwrap_or("").trim();
    let written = written.strip_prefix("file://").unwrap_or(written);
    // Exporters write malformed escapes into file names: those are kept as written.
    let decoded = percent_encoding::percent_decode_str(written).decode_utf8_lossy().into_owned();
    files::inside(folder, decoded.trim_start_matches("./")).or_else(|_| {
        // Exporters write absolute paths from the artist's machine: the file name beside the model.
        let name = files::written_file_name(&decoded);
        if name.is_empty() {
            return Err(format!("no file name in {}", files::quoted(written)));
        }
        Ok(folder.join(name))
    })
}
