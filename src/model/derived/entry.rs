//! The derived-data cache's entries: a header (what they are, the key, the data's length and
//! hash), then the data, little-endian, every run of varying length after its count ([`Writer`]);
//! read back by [`Reader`], which checks everything against the bytes left and the model; and the
//! folder kept under its size ([`trim`]).

use std::path::{Path, PathBuf};

use super::{property_code, Derived, EXTENSION, FORMAT, MAX_CACHE_BYTES};
use crate::anim::bounds::{AnimationBounds, ModelBounds};
use crate::anim::compress::{CompressedAnimation, Precision, Track, TrackData};
use crate::anim::{Aabb, KeyTimes, Property};
use crate::model::lod::Chain;
use crate::model::{Level, Model};

/// An entry's first bytes.
const MAGIC: &[u8; 16] = b"vkskin derived\0\0";
/// The largest entry stored: one past a quarter of the folder's limit would soon push out the rest.
const MAX_ENTRY_BYTES: usize = (MAX_CACHE_BYTES / 4) as usize;

/// Writes the entry: header, then the data ([`Writer`]), into a file of its own renamed into place;
/// then trims the folder.
pub(super) fn store(folder: &Path, path: &Path, key: u128, derived: &Derived) -> std::io::Result<()> {
    let mut data = Writer::default();
    data.derived(derived);
    let mut bytes = Vec::with_capacity(data.0.len() + 64);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&key.to_le_bytes());
    bytes.extend_from_slice(&(data.0.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(&data.0).to_le_bytes());
    bytes.extend_from_slice(&data.0);
    if bytes.len() > MAX_ENTRY_BYTES {
        log::info!("{}: {} bytes of derived data, too many to cache", path.display(), bytes.len());
        return Ok(());
    }
    std::fs::create_dir_all(folder)?;
    // Per process and per write: two workers of one process may store the same key at once.
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let write = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let partial = path.with_extension(format!("partial-{}-{write}", std::process::id()));
    std::fs::write(&partial, &bytes).and_then(|_| std::fs::rename(&partial, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    trim(folder, MAX_CACHE_BYTES);
    Ok(())
}

/// The header's length: magic, format, key, data length, data hash.
pub(super) const HEADER_BYTES: usize = 16 + 4 + 16 + 8 + 16;

/// The entry at `path` when it is whole, its own, and fits the model; `None` otherwise.
pub(super) fn read(path: &Path, key: u128, model: &Model, (levels, compression): (bool, bool)) -> Option<Derived> {
    let bytes = std::fs::read(path).ok()?;
    let header = bytes.get(..HEADER_BYTES)?;
    let field = |range: std::ops::Range<usize>| header.get(range);
    if field(0..16)? != MAGIC
        || u32::from_le_bytes(field(16..20)?.try_into().ok()?) != FORMAT
        || u128::from_le_bytes(field(20..36)?.try_into().ok()?) != key
    {
        return None;
    }
    let length = u64::from_le_bytes(field(36..44)?.try_into().ok()?);
    let data = &bytes[HEADER_BYTES..];
    if data.len() as u64 != length || xxhash_rust::xxh3::xxh3_128(data) != u128::from_le_bytes(field(44..60)?.try_into().ok()?) {
        log::warn!("{}: a damaged entry of the derived-data cache; made again", path.display());
        return None;
    }
    let derived = Reader { bytes: data, at: 0 }.derived(model)?;
    (derived.chain.is_some() == levels && derived.compressed.is_some() == compression).then_some(derived)
}

/// Removes the least recently used entries (by time of modification, which a read renews) until
/// the folder's entries take at most `limit` bytes; a partial entry an interrupted run left is
/// removed once it is an hour old.
pub(super) fn trim(folder: &Path, limit: u64) {
    let Ok(listing) = std::fs::read_dir(folder) else { return };
    let now = std::time::SystemTime::now();
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
    for entry in listing.flatten() {
        let path = entry.path();
        let Ok(metadata) = entry.metadata() else { continue };
        let modified = metadata.modified().unwrap_or(now);
        match path.extension().and_then(|extension| extension.to_str()) {
            Some(EXTENSION) => entries.push((modified, metadata.len(), path)),
            Some(extension)
                if extension.starts_with("partial-") && now.duration_since(modified).is_ok_and(|age| age.as_secs() > 3600) =>
            {
                let _ = std::fs::remove_file(&path);
            }
            _ => {}
        }
    }
    let mut total: u64 = entries.iter().map(|entry| entry.1).sum();
    entries.sort_by_key(|entry| entry.0);
    for (_, size, path) in entries {
        if total <= limit {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= size;
        }
    }
}

/// The entry's data, little-endian; every run of varying length after its count.
#[derive(Default)]
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    fn u8(&mut self, value: u8) {
        self.0.push(value);
    }

    fn u32(&mut self, value: u32) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn u64(&mut self, value: u64) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn f32(&mut self, value: f32) {
        self.u32(value.to_bits());
    }

    fn words(&mut self, words: &[u32]) {
        self.u64(words.len() as u64);
        words.iter().for_each(|&word| self.u32(word));
    }

    fn floats(&mut self, floats: &[f32]) {
        self.u64(floats.len() as u64);
        floats.iter().for_each(|&float| self.f32(float));
    }

    fn aabb(&mut self, aabb: &Aabb) {
        for value in aabb.min.to_array().into_iter().chain(aabb.max.to_array()) {
            self.f32(value);
        }
    }

    fn derived(&mut self, derived: &Derived) {
        self.u64(derived.made_in.to_bits());
        let bounds = &derived.bounds;
        self.u64(bounds.animations.len() as u64);
        for animation in &bounds.animations {
            self.f32(animation.cell_duration);
            self.u64(animation.cells.len() as u64);
            animation.cells.iter().for_each(|cell| self.aabb(cell));
        }
        self.f32(bounds.blend_reach);
        self.u8(u8::from(bounds.mirrors));
        self.floats(&bounds.palette_scales);
        self.f32(bounds.morph_reach);
        match &derived.chain {
            None => self.u8(0),
            Some((chain, seconds)) => {
                self.u8(1);
                self.u64(seconds.to_bits());
                match chain {
                    None => self.u8(0),
                    Some(chain) => {
                        self.u8(1);
                        self.words(chain.order());
                        self.u64(chain.levels().len() as u64);
                        for level in chain.levels() {
                            self.u32(level.vertex_count);
                            self.words(&level.indices);
                            self.u64(level.ranges.len() as u64);
                            level.ranges.iter().for_each(|&(first, count)| {
                                self.u32(first);
                                self.u32(count);
                            });
                            self.f32(level.error);
                        }
                    }
                }
            }
        }
        match &derived.compressed {
            None => self.u8(0),
            Some(clips) => {
                self.u8(1);
                self.u64(clips.len() as u64);
                for clip in clips {
                    match clip {
                        None => self.u8(0),
                        Some(Err(why)) => {
                            self.u8(1);
                            self.u64(why.len() as u64);
                            self.0.extend_from_slice(why.as_bytes());
                        }
                        Some(Ok(compressed)) => {
                            self.u8(2);
                            self.compressed(compressed);
                        }
                    }
                }
            }
        }
    }

    pub(super) fn compressed(&mut self, compressed: &CompressedAnimation) {
        match &compressed.times {
            KeyTimes::Uniform { start, step, count } => {
                self.u8(0);
                self.f32(*start);
                self.f32(*step);
                self.u64(*count as u64);
            }
            KeyTimes::Listed(times) => {
                self.u8(1);
                self.floats(times);
            }
        }
        self.u64(compressed.tracks.len() as u64);
        for track in &compressed.tracks {
            self.u32(track.joint as u32);
            self.u8(property_code(track.property) as u8);
            match &track.data {
                TrackData::Constant(value) => {
                    self.u8(0);
                    value.to_array().into_iter().for_each(|value| self.f32(value));
                }
                TrackData::Packed(words) => {
                    self.u8(1);
                    self.words(words);
                }
            }
        }
        let precision = &compressed.precision;
        self.f32(precision.error);
        self.f32(precision.shell);
        self.floats(&precision.shells);
        self.f32(compressed.max_error);
    }
}

/// Whether a level read back fits `model`: at most its vertices, its indices among its own
/// vertices, a range per mesh inside its indices.
fn level_fits(level: &Level, model: &Model) -> bool {
    let vertices = level.vertex_count as usize;
    vertices <= model.vertices.len()
        && level.indices.iter().all(|&index| (index as usize) < vertices)
        && level.ranges.len() == model.meshes.len()
        && level.ranges.iter().all(|&(first, count)| (first as u64 + count as u64) <= level.indices.len() as u64)
}

/// Reads what [`Writer`] wrote; `None` at the first thing that does not fit (a count past the
/// bytes left, an unknown tag, an index outside the model).
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl Reader<'_> {
    fn take(&mut self, length: usize) -> Option<&[u8]> {
        let taken = self.bytes.get(self.at..self.at.checked_add(length)?)?;
        self.at += length;
        Some(taken)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|bytes| bytes[0])
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|bytes| u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|bytes| u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    fn f32(&mut self) -> Option<f32> {
        self.u32().map(f32::from_bits)
    }

    /// A count of things of at least `size` bytes each: never more than the bytes left hold.
    fn count(&mut self, size: usize) -> Option<usize> {
        let count = usize::try_from(self.u64()?).ok()?;
        (count.checked_mul(size)? <= self.bytes.len() - self.at).then_some(count)
    }

    fn words(&mut self) -> Option<Vec<u32>> {
        let count = self.count(4)?;
        (0..count).map(|_| self.u32()).collect()
    }

    fn floats(&mut self) -> Option<Vec<f32>> {
        let count = self.count(4)?;
        (0..count).map(|_| self.f32()).collect()
    }

    fn aabb(&mut self) -> Option<Aabb> {
        let mut values = [0.0f32; 6];
        for value in &mut values {
            *value = self.f32()?;
        }
        Some(Aabb { min: glam::Vec3::from_slice(&values[..3]), max: glam::Vec3::from_slice(&values[3..]) })
    }

    fn derived(mut self, model: &Model) -> Option<Derived> {
        let made_in = f64::from_bits(self.u64()?);
        let animations = self.count(12)?;
        if animations != model.animations.len() {
            return None;
        }
        let bounds = ModelBounds {
            animations: (0..animations)
                .map(|_| {
                    let cell_duration = self.f32()?;
                    let cells = self.count(24)?;
                    Some(AnimationBounds { cell_duration, cells: (0..cells).map(|_| self.aabb()).collect::<Option<_>>()? })
                })
                .collect::<Option<_>>()?,
            blend_reach: self.f32()?,
            mirrors: self.u8()? != 0,
            palette_scales: self.floats()?,
            morph_reach: self.f32()?,
        };
        let chain = match self.u8()? {
            0 => None,
            1 => {
                let seconds = f64::from_bits(self.u64()?);
                let chain = match self.u8()? {
                    0 => None,
                    1 => {
                        let order = self.words()?;
                        let count = self.count(20)?;
                        if count >= crate::model::MAX_LEVELS {
                            return None;
                        }
                        let levels: Vec<Level> = (0..count)
                            .map(|_| {
                                let vertex_count = self.u32()?;
                                let indices = self.words()?;
                                let ranges = self.count(8)?;
                                let ranges = (0..ranges).map(|_| Some((self.u32()?, self.u32()?))).collect::<Option<_>>()?;
                                let level = Level { vertex_count, indices, ranges, error: self.f32()? };
                                level_fits(&level, model).then_some(level)
                            })
                            .collect::<Option<_>>()?;
                        Some(Chain::from_parts(levels, order, model.vertices.len())?)
                    }
                    _ => return None,
                };
                Some((chain, seconds))
            }
            _ => return None,
        };
        let compressed = match self.u8()? {
            0 => None,
            1 => {
                let count = self.count(1)?;
                if count != model.animations.len() {
                    return None;
                }
                let clips = (0..count)
                    .map(|_| match self.u8()? {
                        0 => Some(None),
                        1 => {
                            let length = self.count(1)?;
                            Some(Some(Err(String::from_utf8(self.take(length)?.to_vec()).ok()?)))
                        }
                        2 => Some(Some(Ok(self.compressed(model.skeleton.len())?))),
                        _ => None,
                    })
                    .collect::<Option<_>>()?;
                Some(clips)
            }
            _ => return None,
        };
        (self.at == self.bytes.len()).then_some(Derived { bounds, chain, compressed, made_in })
    }

    fn compressed(&mut self, joints: usize) -> Option<CompressedAnimation> {
        let times = match self.u8()? {
            0 => KeyTimes::Uniform { start: self.f32()?, step: self.f32()?, count: usize::try_from(self.u64()?).ok()? },
            1 => KeyTimes::Listed(self.floats()?),
            _ => return None,
        };
        let sane = match &times {
            KeyTimes::Uniform { start, step, count } => {
                start.is_finite() && (*count == 1 || (step.is_finite() && *step > 0.0)) && (1..=1 << 26).contains(count)
            }
            KeyTimes::Listed(list) => !list.is_empty() && list.iter().all(|time| time.is_finite()) && list.is_sorted(),
        };
        if !sane {
            return None;
        }
        let count = self.count(6)?;
        let tracks = (0..count)
            .map(|_| {
                let joint = self.u32()? as usize;
                let property = match self.u8()? {
                    0 => Property::Translation,
                    1 => Property::Rotation,
                    2 => Property::Scale,
                    _ => return None,
                };
                let data = match self.u8()? {
                    0 => TrackData::Constant(glam::Vec4::new(self.f32()?, self.f32()?, self.f32()?, self.f32()?)),
                    1 => TrackData::Packed(self.words()?),
                    _ => return None,
                };
                (joint < joints).then_some(Track { joint, property, data })
            })
            .collect::<Option<_>>()?;
        let precision = Precision { error: self.f32()?, shell: self.f32()?, shells: self.floats()? };
        Some(CompressedAnimation { times, tracks, precision, max_error: self.f32()? })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{figure, scratch};
    use super::*;

    #[test]
    fn hostile_counts_are_refused_before_allocating() {
        let model = figure();
        // A count of 2^60 animations' bounds: refused by the bytes left, nothing allocated.
        let mut data = Writer::default();
        data.u64(0);
        data.u64(1 << 60);
        assert!(Reader { bytes: &data.0, at: 0 }.derived(&model).is_none());
        // A vertex order that is not a permutation.
        assert!(Chain::from_parts(Vec::new(), vec![0; model.vertices.len()], model.vertices.len()).is_none());
    }

    #[test]
    fn the_folder_is_trimmed_oldest_first() {
        let folder = scratch("trim");
        std::fs::create_dir_all(&folder).expect("made");
        let now = std::time::SystemTime::now();
        for (index, name) in ["old", "middle", "new"].iter().enumerate() {
            let path = folder.join(format!("{name}.{EXTENSION}"));
            std::fs::write(&path, vec![0u8; 1000]).expect("written");
            let file = std::fs::File::options().append(true).open(&path).expect("opened");
            file.set_modified(now - std::time::Duration::from_secs(100 * (3 - index as u64))).expect("dated");
        }
        trim(&folder, 2000);
        let left: Vec<bool> =
            ["old", "middle", "new"].iter().map(|name| folder.join(format!("{name}.{EXTENSION}")).exists()).collect();
        assert_eq!(left, [false, true, true]);
        let _ = std::fs::remove_dir_all(&folder);
    }
}
