//! What opening a model derives from it before it is shown: its culling cells, its levels of
//! detail and its compressed clips ([`make`]), and a cache of them keyed by the model's content
//! ([`derive`]), so that a file opened again skips the work.
//!
//! **The key** is a 128-bit XXH3 hash of everything the three are computed from, taken from the
//! model as read (after `--clips`, the ranges file and root motion): its vertices, influences,
//! triangles and meshes, morph targets, skeleton and animations; with what was asked (levels,
//! compression), this format's version and the running program's identity (its size and time of
//! modification: a rebuilt program never reads its predecessor's entries). It hashes the model,
//! not the file: a glTF's external buffers, an MD5 mesh's animation files and `--anim` files count,
//! and a copy of a file elsewhere (or renamed) finds the same entry.
//!
//! **Where**: one file per key in `app::derived_cache_folder()` (the user's cache folder, or
//! `VKSKIN_CACHE_DIR`), not beside the model: a model's folder may be read-only or shared (a
//! download, a network drive, `../shared`), and the key does not depend on where the file is.
//! Entries are written whole and renamed into place (another process sees all or nothing); the
//! folder is kept under [`MAX_CACHE_BYTES`], least recently used first out.
//!
//! **Trust**: an entry holds a hash of its own contents, checked before anything in it is
//! believed (damage: a disk, an interrupted copy); then every count is checked against the bytes
//! left and the model (vertex order a permutation, levels' vertices, indices and ranges inside the
//! model, joints inside the skeleton, sample times finite and in order). Anything amiss is a miss:
//! the data is made again and the entry replaced (`entry.rs`). The folder is the user's own,
//! trusted as the program beside it is: a packed track's words are not decoded to check them, and
//! a crafted entry could point the palette pass past a track as a crafted program could do worse.
//! The cache never changes what is shown: an entry holds exactly what [`make`] gives
//! (`tests::an_entry_reads_back_as_made`).

use std::path::Path;

use xxhash_rust::xxh3::Xxh3;

use crate::anim::bounds::ModelBounds;
use crate::anim::compress::CompressedAnimation;
use crate::anim::{Interpolation, KeyTimes, Property};
use crate::model::lod::Chain;
use crate::model::Model;

mod entry;

use entry::{read, store, Writer};

/// The entries' layout version: raised whenever what is written changes.
pub(super) const FORMAT: u32 = 3;
/// The cache folder's size past which the least recently used entries are removed.
pub const MAX_CACHE_BYTES: u64 = 512 << 20;
/// The bytes the key's hasher gathers before it hashes them.
const HASH_BUFFER: usize = 1 << 16;
/// An entry file's extension.
pub(super) const EXTENSION: &str = "vkd";

/// Compressed clips as [`Model::compressed_clips`] gives them: per animation, none (no joint
/// channels), the compressed clip, or why it keeps its keys.
pub type CompressedClips = Vec<Option<Result<CompressedAnimation, String>>>;

/// What [`make`] derives from a model.
pub struct Derived {
    pub bounds: ModelBounds,
    /// The levels of detail, where asked: none for a model that gets none; and the seconds
    /// making them took (when the entry was made, for one read from the cache).
    pub chain: Option<(Option<Chain>, f64)>,
    /// The compressed clips, where asked.
    pub compressed: Option<CompressedClips>,
    /// The seconds making all of it took (when the entry was made, for one read from the cache).
    pub made_in: f64,
}

impl Derived {
    /// Puts it into `model` (the one it was made from): the cells, the compressed clips (a clip
    /// that cannot be compressed gets a note saying why), then the levels, which reorder the
    /// vertices. Returns the seconds the levels took, where asked.
    pub fn apply(self, model: &mut Model) -> Option<f64> {
        model.bounds = self.bounds;
        if let Some(compressed) = self.compressed {
            model.take_compressed(compressed);
        }
        self.chain.map(|(chain, seconds)| {
            match chain {
                Some(chain) => chain.apply(model),
                None => model.levels.clear(),
            }
            seconds
        })
    }
}

/// Where the derived data came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Made now; stored in the cache where one was given and it could be written.
    Made,
    /// Read from the cache.
    Cached,
}

/// The culling cells, and with `levels` the levels of detail and with `compression` the
/// compressed clips, side by side: the chain on a thread of its own (it waits on its own helper
/// thread, and a waiting rayon worker would be one worker less for the others' parallel parts),
/// the cells beside the clips on rayon. All read the model as it is; the levels, which reorder
/// its vertices, go in afterwards ([`Derived::apply`]; the cells do not depend on the order).
pub fn make(model: &Model, levels: bool, compression: bool) -> Derived {
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        let chain = levels.then(|| {
            scope.spawn(|| {
                let started = std::time::Instant::now();
                (crate::model::lod::chain(model), started.elapsed().as_secs_f64())
            })
        });
        let (bounds, compressed) = rayon::join(|| model.cell_bounds(), || compression.then(|| model.compressed_clips()));
        let chain = chain.map(|chain| chain.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        Derived { bounds, chain, compressed, made_in: started.elapsed().as_secs_f64() }
    })
}

/// [`make`], read from the cache in `folder` where it holds the model's entry, else made and
/// stored there (a cache that cannot be written is logged and otherwise ignored). Without a
/// folder: made.
pub fn derive(model: &Model, levels: bool, compression: bool, folder: Option<&Path>) -> (Derived, Source) {
    let Some(folder) = folder else { return (make(model, levels, compression), Source::Made) };
    let key = key(model, levels, compression);
    let path = folder.join(format!("{key:032x}.{EXTENSION}"));
    if let Some(derived) = read(&path, key, model, (levels, compression)) {
        // Used now: the last to be removed when the folder is trimmed.
        let _ =
            std::fs::File::options().append(true).open(&path).and_then(|file| file.set_modified(std::time::SystemTime::now()));
        return (derived, Source::Cached);
    }
    let derived = make(model, levels, compression);
    if let Err(error) = store(folder, &path, key, &derived) {
        log::warn!("the derived-data cache {} could not be written: {error}", folder.display());
    }
    (derived, Source::Made)
}

/// The model's key: its content (as the module's header says), what is asked and who asks.
pub fn key(model: &Model, levels: bool, compression: bool) -> u128 {
    let mut hash = Hasher::new();
    hash.u32(FORMAT);
    hash.bytes(env!("CARGO_PKG_VERSION").as_bytes());
    let program = std::env::current_exe().and_then(std::fs::metadata).ok();
    hash.u64(program.as_ref().map_or(0, |metadata| metadata.len()));
    let modified = program.and_then(|metadata| metadata.modified().ok());
    let since = modified.and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok()).unwrap_or_default();
    hash.u64(since.as_secs());
    hash.u32(since.subsec_nanos());
    hash.u32(u32::from(levels) | u32::from(compression) << 1);
    model_content(&mut hash, model);
    hash.digest()
}

/// Feeds what the derived data is computed from into `hash`: everything but the name, the file
/// paths, the materials' images, the file layout and what is derived.
fn model_content(hash: &mut Hasher, model: &Model) {
    hash.u64(model.vertices.len() as u64);
    for vertex in &model.vertices {
        hash.floats(&vertex.position.to_array());
        hash.floats(&vertex.normal.to_array());
        hash.floats(&vertex.tangent.to_array());
        hash.floats(&vertex.uv.to_array());
        hash.floats(&vertex.color.to_array());
        hash.u32(vertex.first_influence);
        hash.u32(vertex.influence_count);
    }
    hash.u64(model.influences.len() as u64);
    for influence in &model.influences {
        hash.u32(influence.joint);
        hash.floats(&[influence.weight]);
    }
    hash.words(&model.indices);
    hash.u64(model.meshes.len() as u64);
    for mesh in &model.meshes {
        hash.u32(mesh.first_index);
        hash.u32(mesh.index_count);
        hash.u64(mesh.material as u64);
    }
    hash.u64(model.influence_offsets.len() as u64);
    for offset in &model.influence_offsets {
        hash.floats(&offset.to_array());
    }
    hash.u64(model.morph_targets.len() as u64);
    for target in &model.morph_targets {
        hash.words(&target.vertices);
        hash.u64(target.position_deltas.len() as u64);
        for (position, normal) in target.position_deltas.iter().zip(&target.normal_deltas) {
            hash.floats(&position.to_array());
            hash.floats(&normal.to_array());
        }
        hash.floats(&[target.default_weight]);
    }
    hash.u64(model.skeleton.joints.len() as u64);
    for joint in &model.skeleton.joints {
        hash.bytes(joint.name.as_bytes());
        hash.u64(joint.parent.map_or(u64::MAX, |parent| parent as u64));
        hash.floats(&joint.inverse_bind.to_cols_array());
        hash.floats(&joint.pre.to_cols_array());
        hash.floats(&joint.rest.rotation.to_array());
        hash.floats(&joint.rest.translation.to_array());
        hash.floats(&joint.rest.scale.to_array());
    }
    hash.u64(model.animations.len() as u64);
    for animation in &model.animations {
        hash.bytes(animation.name.as_bytes());
        hash.floats(&[animation.duration, animation.frame_rate.unwrap_or(-1.0)]);
        hash.u64(animation.channels.len() as u64);
        for channel in &animation.channels {
            hash.u64(channel.joint as u64);
            hash.u32(property_code(channel.property));
            hash.u32(interpolation_code(channel.interpolation));
            hash.times(&channel.times);
            hash.u32(u32::from(channel.mask) | u32::from(channel.implied_w) << 8 | u32::from(channel.wraps) << 9);
            hash.floats(&channel.base.to_array());
            hash.floats(&channel.values);
        }
        // Already compressed (the viewer's worker sees a model again): the levels' poses play it.
        match &animation.compressed {
            None => hash.u32(0),
            Some(compressed) => {
                let mut written = Writer::default();
                written.compressed(compressed);
                hash.bytes(&written.0);
            }
        }
        hash.u64(animation.weights.len() as u64);
        for weights in &animation.weights {
            hash.u64(weights.target as u64);
            hash.u32(interpolation_code(weights.interpolation));
            hash.times(&weights.times);
            hash.floats(&weights.values);
        }
    }
    hash.u64(model.clips.len() as u64);
    for clip in &model.clips {
        hash.u64(clip.animation as u64);
        hash.floats(&[clip.start, clip.duration]);
    }
}

pub(super) fn property_code(property: Property) -> u32 {
    match property {
        Property::Translation => 0,
        Property::Rotation => 1,
        Property::Scale => 2,
    }
}

fn interpolation_code(interpolation: Interpolation) -> u32 {
    match interpolation {
        Interpolation::Step => 0,
        Interpolation::Linear => 1,
        Interpolation::CubicSpline => 2,
        Interpolation::Hermite => 3,
    }
}

/// XXH3 fed little-endian numbers, a length before every run of varying length; gathered in a
/// buffer first (the hasher's own calls cost more than the few bytes most of them would take).
struct Hasher(Xxh3, Vec<u8>);

impl Hasher {
    fn new() -> Hasher {
        Hasher(Xxh3::new(), Vec::with_capacity(HASH_BUFFER))
    }

    fn flush_if_full(&mut self) {
        if self.1.len() >= HASH_BUFFER {
            self.0.update(&self.1);
            self.1.clear();
        }
    }

    fn digest(mut self) -> u128 {
        self.0.update(&self.1);
        self.0.digest128()
    }

    fn u32(&mut self, value: u32) {
        self.1.extend_from_slice(&value.to_le_bytes());
        self.flush_if_full();
    }

    fn u64(&mut self, value: u64) {
        self.1.extend_from_slice(&value.to_le_bytes());
        self.flush_if_full();
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.1.extend_from_slice(bytes);
        self.flush_if_full();
    }

    fn words(&mut self, words: &[u32]) {
        self.u64(words.len() as u64);
        for chunk in words.chunks(HASH_BUFFER / 4) {
            chunk.iter().for_each(|word| self.1.extend_from_slice(&word.to_le_bytes()));
            self.flush_if_full();
        }
    }

    fn floats(&mut self, floats: &[f32]) {
        self.u64(floats.len() as u64);
        for chunk in floats.chunks(HASH_BUFFER / 4) {
            chunk.iter().for_each(|float| self.1.extend_from_slice(&float.to_bits().to_le_bytes()));
            self.flush_if_full();
        }
    }

    fn times(&mut self, times: &KeyTimes) {
        match times {
            KeyTimes::Uniform { start, step, count } => {
                self.u32(0);
                self.floats(&[*start, *step]);
                self.u64(*count as u64);
            }
            KeyTimes::Listed(times) => {
                self.u32(1);
                self.floats(times);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::entry::HEADER_BYTES;
    use super::*;

    /// The bundled figure with two cut clips, as `vkskin FIGURE` opens it (root motion aside).
    pub(super) fn figure() -> Model {
        // A folder per call: the tests run side by side in one process.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let folder = std::env::temp_dir().join(format!("vkskin-derived-figure-{}-{call}", std::process::id()));
        crate::generate::write_assets(&folder).expect("the figure is written");
        let path = folder.join("figure.md5mesh");
        let model = crate::formats::load_model(&path, &crate::app::default_animations(&path, &[])).expect("the figure reads");
        let _ = std::fs::remove_dir_all(&folder);
        model
    }

    pub(super) fn scratch(name: &str) -> PathBuf {
        let folder = std::env::temp_dir().join(format!("vkskin-derived-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        folder
    }

    /// The model with the derived data put in, as a comparable whole.
    fn applied(model: &Model, derived: Derived) -> (Model, Option<f64>) {
        let mut model = model.clone();
        let seconds = derived.apply(&mut model);
        (model, seconds)
    }

    #[test]
    fn an_entry_reads_back_as_made() {
        let model = figure();
        let folder = scratch("round-trip");
        let (made, source) = derive(&model, true, true, Some(&folder));
        assert_eq!(source, Source::Made);
        assert!(made.chain.as_ref().is_some_and(|(chain, _)| chain.is_some()), "the figure has levels");
        assert!(made.compressed.as_ref().is_some_and(|clips| clips.iter().any(|clip| matches!(clip, Some(Ok(_))))));
        let (cached, source) = derive(&model, true, true, Some(&folder));
        assert_eq!(source, Source::Cached);
        let (made, cached) = (applied(&model, made), applied(&model, cached));
        assert_eq!(made.1, cached.1, "the levels' time is the one measured when they were made");
        assert_eq!(made.0, cached.0, "the model from the cache is the model made");
        // Asked for less, another entry.
        assert_eq!(derive(&model, false, true, Some(&folder)).1, Source::Made);
        assert_eq!(derive(&model, false, true, Some(&folder)).1, Source::Cached);
        let _ = std::fs::remove_dir_all(&folder);
    }

    #[test]
    fn another_model_another_key() {
        let model = figure();
        let mut moved = model.clone();
        moved.vertices[7].position.x += 1e-6;
        let mut rekeyed = model.clone();
        if let Some(value) = rekeyed.animations[0].channels[3].values.get_mut(5) {
            *value = -*value;
        }
        // Its clips already compressed (the viewer's worker may see such a model): the levels'
        // poses play them.
        let mut compressed = model.clone();
        compressed.compress_clips();
        assert!(compressed.animations.iter().any(|animation| animation.compressed.is_some()));
        let keys = [
            key(&model, true, true),
            key(&moved, true, true),
            key(&rekeyed, true, true),
            key(&model, true, false),
            key(&compressed, true, true),
        ];
        for (index, a) in keys.iter().enumerate() {
            for b in &keys[index + 1..] {
                assert_ne!(a, b);
            }
        }
        let mut renamed = model.clone();
        renamed.name = "another name".into();
        assert_eq!(key(&model, true, true), key(&renamed, true, true), "a copy under another name is the same model");
    }

    #[test]
    fn a_damaged_entry_is_made_again() {
        let model = figure();
        let folder = scratch("damaged");
        let (made, _) = derive(&model, true, true, Some(&folder));
        let made = applied(&model, made);
        let path = folder.join(format!("{:032x}.{EXTENSION}", key(&model, true, true)));
        let bytes = std::fs::read(&path).expect("the entry is written");
        // A byte flipped in the data, the data cut short, the header's key changed: each a miss.
        let mut flipped = bytes.clone();
        assert!(bytes.len() / 2 > HEADER_BYTES);
        flipped[bytes.len() / 2] ^= 0x40;
        let mut other_key = bytes.clone();
        other_key[20] ^= 1;
        for damaged in [flipped, bytes[..bytes.len() - 5].to_vec(), bytes[..HEADER_BYTES - 1].to_vec(), other_key] {
            std::fs::write(&path, &damaged).expect("written");
            let (derived, source) = derive(&model, true, true, Some(&folder));
            assert_eq!(source, Source::Made);
            assert_eq!(applied(&model, derived).0, made.0);
            // ...and the entry is whole again.
            assert_eq!(derive(&model, true, true, Some(&folder)).1, Source::Cached);
        }
        let _ = std::fs::remove_dir_all(&folder);
    }
}
