//! Materials and textures: base colour, normal maps and images, found or warned about.

use super::buffers::read_uri;
use super::builder::Builder;
use crate::formats::files;
use crate::model::{Material, Texture};
use glam::Vec4;
use std::borrow::Cow;
use std::path::PathBuf;

impl Builder<'_> {
    /// The model material for a glTF material (or the default), made on first use.
    pub(super) fn material(&mut self, material: gltf::Material<'_>) -> usize {
        let index = material.index();
        if let Some(&known) = self.material_map.get(&index) {
            return known;
        }
        let made = match index {
            None => Material::untextured("default"),
            Some(index) => {
                let name = material.name().map_or_else(|| format!("material_{index}"), str::to_string);
                let what = format!("material {index} (\"{name}\")");
                let pbr = material.pbr_metallic_roughness();
                let factor = Vec4::from_array(pbr.base_color_factor());
                let base_color = if factor.is_finite() { factor } else { Vec4::ONE };
                let color_info = pbr.base_color_texture().map(|info| (info.texture(), info.tex_coord()));
                let normal_info = material.normal_texture().map(|info| (info.texture(), info.tex_coord()));
                let texture = color_info.and_then(|(texture, set)| self.texture(&texture, set, "base colour", &what));
                let normal_map = normal_info.and_then(|(texture, set)| self.texture(&texture, set, "normal", &what));
                Material { name, base_color, texture, normal_map }
            }
        };
        let model_index = self.materials.len();
        self.materials.push(made);
        self.material_map.insert(index, model_index);
        model_index
    }

    /// A texture's pixels, or a warning saying why not.
    pub(super) fn texture(&mut self, texture: &gltf::Texture<'_>, set: u32, role: &str, material: &str) -> Option<Texture> {
        if set != 0 {
            self.warnings.push(format!("{material}: the {role} texture uses TEXCOORD_{set}; vkskin reads TEXCOORD_0 for it"));
        }
        let (texture_index, image_index) = (texture.index(), texture.source().index());
        if !self.images.contains_key(&image_index) {
            let described = self.read_image(image_index);
            self.images.insert(image_index, described);
        }
        match self.images.get(&image_index) {
            Some(Ok(texture)) => Some(texture.clone()),
            Some(Err(reason)) => {
                let image = self.data.document.as_json().images.get(image_index);
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

    /// An image's bytes, described (its pixels are decoded at upload: `formats::texture`). Read
    /// from the JSON: the crate's `Image::source` unwraps a mimeType that some writers leave out.
    pub(super) fn read_image(&mut self, image_index: usize) -> Result<Texture, String> {
        let document = self.data.document;
        let image = document
            .as_json()
            .images
            .get(image_index)
            .ok_or_else(|| format!("expected image {image_index} to exist, found {} images", document.images().len()))?;
        let embedded = PathBuf::from(format!("{}#images[{image_index}]", self.path().display()));
        let view = image.buffer_view.and_then(|view| document.views().nth(view.value()));
        let (bytes, path): (Cow<'_, [u8]>, PathBuf) = match (view, &image.uri) {
            (Some(view), _) => {
                let bytes =
                    self.data.view_bytes(&view, &format!("image {image_index}")).map_err(|view_error| view_error.message)?;
                (Cow::Borrowed(bytes), embedded)
            }
            (None, Some(uri)) => {
                let limit = files::MAX_TEXTURE_BYTES.min(self.external_left);
                let (bytes, file) = read_uri(uri, self.base_dir, limit, true)?;
                // A data: URI is decoded whole, whatever the limit: the budget may run out here.
                self.external_left = self.external_left.saturating_sub(bytes.len() as u64);
                (Cow::Owned(bytes), file.unwrap_or(embedded))
            }
            (None, None) => return Err("expected a bufferView or a uri, found neither".to_string()),
        };
        crate::formats::texture::describe(bytes.into_owned(), path)
    }
}
