//! Materials and textures: base colour, normal maps and images, found or warned about.

use super::*;

impl Builder<'_> {
    /// The model material for a glTF material (or the default), made on first use.
    pub(super) fn material(&mut self, index: Option<usize>, label: &str) -> Result<usize, FormatError> {
        if let Some(&known) = self.material_map.get(&index) {
            return Ok(known);
        }
        let material = match index {
            None => Material::untextured("default"),
            Some(index) => {
                let materials = &self.data.root.materials;
                let Some(json) = materials.get(index) else {
                    return Err(error(
                        self.path(),
                        format!("{label}: expected material {index} to exist, found {} materials", materials.len()),
                    ));
                };
                let name = json.name.clone().unwrap_or_else(|| format!("material_{index}"));
                let what = format!("material {index} (\"{name}\")");
                let factor = Vec4::from_array(json.pbr_metallic_roughness.base_color_factor.0);
                let base_color = if factor.is_finite() { factor } else { Vec4::ONE };
                let color_info =
                    json.pbr_metallic_roughness.base_color_texture.as_ref().map(|info| (info.index.value(), info.tex_coord));
                let normal_info = json.normal_texture.as_ref().map(|info| (info.index.value(), info.tex_coord));
                let texture = color_info.and_then(|(texture, set)| self.texture(texture, set, "base colour", &what));
                let normal_map = normal_info.and_then(|(texture, set)| self.texture(texture, set, "normal", &what));
                Material { name, base_color, texture, normal_map }
            }
        };
        let model_index = self.materials.len();
        self.materials.push(material);
        self.material_map.insert(index, model_index);
        Ok(model_index)
    }

    /// A texture's pixels, or a warning saying why not.
    pub(super) fn texture(&mut self, texture_index: usize, set: u32, role: &str, material: &str) -> Option<Texture> {
        if set != 0 {
            self.warnings.push(format!("{material}: the {role} texture uses TEXCOORD_{set}; vkskin reads TEXCOORD_0 for it"));
        }
        let root = self.data.root;
        let image_index = match root.textures.get(texture_index) {
            Some(texture) => texture.source.value(),
            None => {
                self.warnings.push(format!(
                    "{material}: {role} texture {texture_index} does not exist ({} textures); drawn without it",
                    root.textures.len()
                ));
                return None;
            }
        };
        if !self.images.contains_key(&image_index) {
            let described = self.read_image(image_index);
            self.images.insert(image_index, described);
        }
        match self.images.get(&image_index) {
            Some(Ok(texture)) => Some(texture.clone()),
            Some(Err(reason)) => {
                let image = root.images.get(image_index);
                let named = image.and_then(|image| image.name.clone().or_else(|| image.uri.clone()));
                let named =
                    named.filter(|name| !name.starts_with("data:")).map(|name| format!(" \"{name}\"")).unwrap_or_default();
                self.warnings.push(format!(
                    "{material}: {role} texture {texture_index} (image {image_index}{named}) not loaded: {reason}; drawn without it"
                ));
                None
            }
            None => None,
        }
    }

    /// An image's bytes, described (its pixels are decoded at upload: `formats::texture`).
    pub(super) fn read_image(&mut self, image_index: usize) -> Result<Texture, String> {
        let root = self.data.root;
        let image = root
            .images
            .get(image_index)
            .ok_or_else(|| format!("expected image {image_index} to exist, found {} images", root.images.len()))?;
        let embedded = PathBuf::from(format!("{}#images[{image_index}]", self.path().display()));
        let (bytes, path): (Cow<'_, [u8]>, PathBuf) = match (&image.buffer_view, &image.uri) {
            (Some(view), _) => {
                let view =
                    self.data.view(view.value(), &format!("image {image_index}")).map_err(|view_error| view_error.message)?;
                (Cow::Borrowed(view.bytes), embedded)
            }
            (None, Some(uri)) => {
                let limit = files::MAX_TEXTURE_BYTES.min(self.external_left);
                let (bytes, file) = read_uri(uri, self.base_dir, limit, true)?;
                self.external_left -= bytes.len() as u64;
                (Cow::Owned(bytes), file.unwrap_or(embedded))
            }
            (None, None) => return Err("expected a bufferView or a uri, found neither".to_string()),
        };
        crate::formats::texture::describe(bytes.into_owned(), path)
    }
}
