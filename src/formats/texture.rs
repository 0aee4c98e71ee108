//! Textures, for every loader: one reader, one decoder, one set of limits.
//!
//! A loader hands over a texture's encoded bytes (a file beside the model, or bytes inside it).
//! Loading reads only the header: the format (by content, with the file's extension as a hint for
//! TGA, which has no signature) and the size, refused past [`MAX_SIDE`]. The pixels are decoded
//! when the renderer uploads the texture ([`Texture::decode`]), so `inspect`, load times and a
//! model's memory never pay for pixels no one draws (a 1024 × 1024 PNG costs 4 MiB and about
//! 10 ms to decode; its header costs microseconds).

use ahash::AHashMap as HashMap;
use std::io::Cursor;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use image::{ImageFormat, ImageReader, Limits};

use super::files;
use crate::model::Texture;

/// The widest and tallest texture accepted (Vulkan guarantees 4096; lavapipe and desktop GPUs
/// take 16384): 8192 × 8192 RGBA8 is 256 MiB decoded.
pub const MAX_SIDE: u32 = 8192;

/// The decoder may allocate the decoded image and no more.
const MAX_DECODED_BYTES: u64 = MAX_SIDE as u64 * MAX_SIDE as u64 * 4;

fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    limits
}

/// A reader by content; with the decoder's limits when it will decode (reading the header alone,
/// the size is checked here, so the message can say what it found).
fn reader<'a>(bytes: &'a [u8], path: &Path, limited: bool) -> Result<ImageReader<Cursor<&'a [u8]>>, String> {
    let mut reader = ImageReader::new(Cursor::new(bytes));
    if let Ok(format) = ImageFormat::from_path(path) {
        reader.set_format(format);
    }
    let mut reader = reader.with_guessed_format().map_err(|error| error.to_string())?;
    if reader.format().is_none() {
        return Err("expected a PNG, JPEG, TGA, BMP or GIF image, found none of them".to_string());
    }
    if limited {
        reader.limits(limits());
    }
    Ok(reader)
}

/// A texture from its encoded bytes: the header is read and checked, the pixels are not decoded.
pub fn describe(encoded: Vec<u8>, path: PathBuf) -> Result<Texture, String> {
    let (width, height) = reader(&encoded, &path, false)?.into_dimensions().map_err(|error| error.to_string())?;
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(format!("expected a texture of 1 to {MAX_SIDE} pixels a side, found {width} x {height}"));
    }
    Ok(Texture { path, width, height, encoded: Arc::from(encoded) })
}

/// The texture files one model has read: each file is read once however many parts name it
/// (clones share the bytes), and all of them together stay within `files::MAX_EXTERNAL_BYTES`.
#[derive(Default)]
pub struct Library {
    read: HashMap<PathBuf, Result<Texture, String>>,
    bytes: u64,
}

impl Library {
    /// A texture file, described (see [`describe`]).
    pub fn describe_file(&mut self, path: &Path) -> Result<Texture, String> {
        if let Some(known) = self.read.get(path) {
            return known.clone();
        }
        let left = files::MAX_EXTERNAL_BYTES.saturating_sub(self.bytes);
        let described = files::read(path, files::MAX_TEXTURE_BYTES.min(left)).and_then(|encoded| {
            self.bytes += encoded.len() as u64;
            describe(encoded, path.to_path_buf())
        });
        self.read.insert(path.to_path_buf(), described.clone());
        described
    }
}

impl Texture {
    /// The pixels as RGBA8, rows top to bottom: `width × height × 4` bytes.
    pub fn decode(&self) -> Result<Vec<u8>, String> {
        let image = reader(&self.encoded, &self.path, true)?.decode().map_err(|error| error.to_string())?;
        if (image.width(), image.height()) != (self.width, self.height) {
            return Err(format!(
                "the header says {} x {}, the pixels are {} x {}",
                self.width,
                self.height,
                image.width(),
                image.height()
            ));
        }
        Ok(image.into_rgba8().into_raw())
    }
}

/// Where a material's texture may be, in the order tried: a relative path (`.\skin.jpg`,
/// `textures\skin.jpg`) under the model's folder; the file name alone in that folder (all that is
/// left of an absolute path such as `C:\models\skin.jpg`); then a file in that folder whose name
/// matches ignoring ASCII case, since the paths were written on Windows; last, a file there of the
/// same name in another image format (a Milkshape material's `Hair.tga` shipped as `hair.png`).
pub fn candidates(written: &str, folder: &Path) -> Vec<PathBuf> {
    let normalized = files::written_path(written);
    let absolute = normalized.starts_with('/') || files::has_drive_letter(&normalized);
    let file_name = files::written_file_name(written);
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut add = |candidate: PathBuf| {
        if !candidates.contains(&candidate) {
            candidates.push(candidate);
        }
    };
    if !absolute {
        let relative: PathBuf = Path::new(&normalized).components().filter(|component| *component != Component::CurDir).collect();
        add(folder.join(relative));
    }
    if !file_name.is_empty() {
        add(folder.join(&file_name));
        // The folder listed once, sorted, for both looks.
        let mut entries: Vec<PathBuf> = std::fs::read_dir(folder)
            .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
            .unwrap_or_default();
        entries.sort();
        let name_of = |path: &PathBuf| path.file_name().and_then(|name| name.to_str()).map(str::to_string);
        entries
            .iter()
            .filter(|path| name_of(path).is_some_and(|name| name.eq_ignore_ascii_case(&file_name)))
            .for_each(|path| add(path.clone()));
        let stem = Path::new(&file_name).file_stem().and_then(|stem| stem.to_str()).unwrap_or_default().to_string();
        let converted = |path: &&PathBuf| {
            let same_stem = path.file_stem().and_then(|name| name.to_str()).is_some_and(|name| name.eq_ignore_ascii_case(&stem));
            let extension = path.extension().and_then(|extension| extension.to_str()).map(str::to_ascii_lowercase);
            same_stem && matches!(extension.as_deref(), Some("png" | "jpg" | "jpeg" | "tga" | "bmp" | "gif"))
        };
        entries.iter().filter(converted).for_each(|path| add(path.clone()));
    }
    candidates
}

/// The texture a material names as `written` (a path from the authoring tool's machine), found by
/// [`candidates`] and described; `None` with a warning naming what was tried when none is there.
pub fn find(written: &str, folder: &Path, textures: &mut Library, material: &str, warnings: &mut Vec<String>) -> Option<Texture> {
    let candidates = candidates(written, folder);
    let mut failures = Vec::new();
    let texture =
        candidates.iter().filter(|candidate| candidate.is_file()).find_map(|candidate| match textures.describe_file(candidate) {
            Ok(texture) => Some(texture),
            Err(error) => {
                failures.push(format!("{}: {error}", candidate.display()));
                None
            }
        });
    if texture.is_none() {
        // The first two places tried say where it was looked for; the rest is their variants.
        let mut tried = candidates.iter().take(2).map(|path| path.display().to_string()).collect::<Vec<_>>().join(", ");
        if candidates.len() > 2 {
            tried += &format!(" and {} more", candidates.len() - 2);
        }
        let (material, written) = (crate::formats::files::quoted(material), crate::formats::files::quoted(written));
        warnings.push(if failures.is_empty() {
            format!("material {material}: texture {written} not found; tried {tried}")
        } else {
            format!("material {material}: texture {written} not decoded ({}); tried {tried}", failures.join("; "))
        });
    }
    texture
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbaImage::from_fn(width, height, |x, y| image::Rgba([x as u8, y as u8, 7, 255]));
        let mut bytes = Vec::new();
        image.write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
        bytes
    }

    #[test]
    fn describing_reads_the_size_and_decoding_gives_the_pixels() {
        let texture = describe(png(3, 2), PathBuf::from("t.png")).unwrap();
        assert_eq!((texture.width, texture.height), (3, 2));
        let pixels = texture.decode().unwrap();
        assert_eq!(pixels.len(), 3 * 2 * 4);
        assert_eq!(&pixels[(3 + 2) * 4..][..4], &[2, 1, 7, 255]);
    }

    #[test]
    fn bad_bytes_and_huge_sizes_are_refused_before_decoding() {
        let error = describe(b"not an image at all".to_vec(), PathBuf::from("t.bin")).unwrap_err();
        assert!(error.contains("expected a PNG, JPEG, TGA, BMP or GIF"), "{error}");
        // A PNG header claiming 100000 × 1 pixels: refused from the header alone.
        let mut huge = png(1, 1);
        huge[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        let error = describe(huge, PathBuf::from("huge.png")).unwrap_err();
        println!("huge: {error}");
        // A truncated body passes the header but not the decoder.
        let mut truncated = png(64, 64);
        truncated.truncate(60);
        let texture = describe(truncated, PathBuf::from("cut.png")).unwrap();
        assert!(texture.decode().is_err());
    }

    #[test]
    fn a_texture_named_in_one_format_is_found_in_another() {
        let folder = std::env::temp_dir().join(format!("vkskin-texture-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("hair.png"), png(2, 2)).unwrap();
        let mut library = Library::default();
        let mut warnings = Vec::new();
        let found = find("Hair.tga", &folder, &mut library, "Hair", &mut warnings);
        assert!(found.is_some_and(|texture| texture.path.ends_with("hair.png")) && warnings.is_empty(), "{warnings:?}");
        let missing = find("C:\\art\\Skin.tga", &folder, &mut library, "Skin", &mut warnings);
        assert!(missing.is_none() && warnings.len() == 1 && warnings[0].matches(", ").count() <= 1, "{warnings:?}");
        let _ = std::fs::remove_dir_all(&folder);
    }
}
