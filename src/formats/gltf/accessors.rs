//! Accessors, read by the gltf crate's accessor iterators (`gltf::accessor::Iter`) behind a
//! preflight. gltf 1.4.1 computes `offset + stride × (count − 1) + size` unchecked (a count of 0 or
//! a huge offset overflows), trusts a byteStride smaller than the element, and unwraps one sparse
//! value per sparse index; it also reads whatever component type the caller names. So before the
//! crate reads an accessor, [`Data::preflight`] checks its type and component type against what the
//! caller allows, its count (at least one), its stride (at least the element size), and that every
//! byte range it touches (elements, sparse indices and values) lies in its bufferView and buffer,
//! with the error naming the accessor, what it is for and what was expected. Sparse indices must
//! rise and stay below the count (the crate would skip the others silently). Then components are
//! dequantized as the spec says, and decoded bytes are capped (see [`MAX_DECODED_BYTES`]).

use super::{error, located, MAX_DECODED_BYTES};
use crate::formats::FormatError;
use gltf::accessor::DataType;
use gltf::accessor::{Dimensions, Item, Iter};
use gltf::buffer::View;
use gltf::{Accessor, Document};
use std::cell::Cell;
use std::path::Path;

/// The document and its buffers, with checked accessor reads.
pub(super) struct Data<'a> {
    pub(super) path: &'a Path,
    pub(super) document: &'a Document,
    /// Exactly each buffer's byteLength.
    pub(super) buffers: &'a [Vec<u8>],
    /// Where buffer 0 starts in the file when it is the GLB's BIN chunk: errors there are byte offsets.
    pub(super) bin_offset: Option<u64>,
    /// Decoded bytes still allowed (see [`MAX_DECODED_BYTES`]).
    pub(super) budget: Cell<usize>,
}

/// A component type by its name in the spec, for errors.
pub(super) fn component_name(component: DataType) -> &'static str {
    match component {
        DataType::I8 => "BYTE",
        DataType::U8 => "UNSIGNED_BYTE",
        DataType::I16 => "SHORT",
        DataType::U16 => "UNSIGNED_SHORT",
        DataType::U32 => "UNSIGNED_INT",
        DataType::F32 => "FLOAT",
    }
}

fn dimensions_name(dimensions: Dimensions) -> &'static str {
    match dimensions {
        Dimensions::Scalar => "SCALAR",
        Dimensions::Vec2 => "VEC2",
        Dimensions::Vec3 => "VEC3",
        Dimensions::Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Dimensions::Mat4 => "MAT4",
    }
}

/// A normalized integer's value, as the spec defines it (signed ones clamp at -1).
pub(super) fn dequantize(raw: f64, component: DataType) -> f64 {
    match component {
        DataType::I8 => (raw / 127.0).max(-1.0),
        DataType::U8 => raw / 255.0,
        DataType::I16 => (raw / 32767.0).max(-1.0),
        DataType::U16 => raw / 65535.0,
        DataType::U32 => raw / f64::from(u32::MAX),
        DataType::F32 => raw,
    }
}

/// An element as the crate's iterator yields it, appended as `f64` components (every component
/// type converts exactly).
trait Element: Item {
    fn append(self, out: &mut Vec<f64>);
}

macro_rules! element_of_components {
    ($($component:ty),*) => {$(
        impl Element for $component {
            fn append(self, out: &mut Vec<f64>) {
                out.push(f64::from(self));
            }
        }
    )*};
}
element_of_components!(i8, u8, i16, u16, u32, f32);

impl<T: Element + Copy, const N: usize> Element for [T; N]
where
    [T; N]: Item,
{
    fn append(self, out: &mut Vec<f64>) {
        for component in self {
            component.append(out);
        }
    }
}

/// The element types of each width (SCALAR, VEC2..4, MAT4) for one component type.
type Scalar<C> = C;
type Vector2<C> = [C; 2];
type Vector3<C> = [C; 3];
type Vector4<C> = [C; 4];
type Matrix4<C> = [[C; 4]; 4];

impl<'a> Data<'a> {
    fn offset_in_file(&self, view: &View<'_>, within: u64) -> Option<u64> {
        let start = self.bin_offset.filter(|_| view.buffer().index() == 0)?;
        Some(start.saturating_add(view.offset() as u64).saturating_add(within))
    }

    /// A bufferView's bytes, once its range is checked against its buffer.
    pub(super) fn view_bytes(&self, view: &View<'_>, what: &str) -> Result<&'a [u8], FormatError> {
        let buffer = view.buffer().index();
        let bytes = self.buffers.get(buffer).map_or(&[][..], |data| &data[..]);
        let (offset, length) = (view.offset(), view.length());
        offset.checked_add(length).and_then(|end| bytes.get(offset..end)).ok_or_else(|| {
            located(
                self.path,
                self.offset_in_file(view, 0),
                format!(
                    "bufferView {} ({what}): expected bytes {offset}..{} to lie within buffer {buffer} ({} bytes)",
                    view.index(),
                    offset as u128 + length as u128,
                    bytes.len()
                ),
            )
        })
    }

    /// Checks that `count` elements of `size` bytes from `offset`, `stride` apart as the crate will
    /// read them, fit in the view.
    fn check_range(&self, view: &View<'_>, name: &str, offset: usize, count: usize, size: usize) -> Result<(), FormatError> {
        let view_bytes = self.view_bytes(view, name)?;
        let stride = view.stride().unwrap_or(size);
        if stride < size {
            return Err(located(
                self.path,
                self.offset_in_file(view, 0),
                format!(
                    "{name}: expected bufferView {}'s byteStride to be at least the element size {size}, found {stride}",
                    view.index()
                ),
            ));
        }
        let needed = (stride as u128) * (count.saturating_sub(1) as u128) + offset as u128 + size as u128;
        if count == 0 || needed > view_bytes.len() as u128 {
            return Err(located(
                self.path,
                self.offset_in_file(view, offset as u64),
                format!(
                    "{name}: expected {count} elements of {size} bytes (stride {stride}) from byte {offset} to fit in \
                     bufferView {} ({} bytes), but they need {needed}",
                    view.index(),
                    view_bytes.len()
                ),
            ));
        }
        Ok(())
    }

    /// What the crate's iterators assume of an accessor, checked; see the module's comment.
    fn preflight(&self, accessor: &Accessor<'_>, name: &str, width: Dimensions, allowed: &[DataType]) -> Result<(), FormatError> {
        let fail = |message: String| Err(error(self.path, format!("{name}: {message}")));
        if accessor.dimensions() != width {
            return fail(format!("expected type {}, found {}", dimensions_name(width), dimensions_name(accessor.dimensions())));
        }
        let component = accessor.data_type();
        if !allowed.contains(&component) {
            let names: Vec<&str> = allowed.iter().map(|&allowed| component_name(allowed)).collect();
            return fail(format!("expected componentType {}, found {}", names.join(", "), component_name(component)));
        }
        let count = accessor.count();
        if count == 0 {
            return fail("expected a count of at least 1, found 0".to_string());
        }
        if let Some(view) = accessor.view() {
            self.check_range(&view, name, accessor.offset(), count, accessor.size())?;
        }
        let Some(sparse) = accessor.sparse() else { return Ok(()) };
        let sparse_count = sparse.count();
        if sparse_count == 0 || sparse_count > count {
            return fail(format!("expected sparse.count from 1 to count ({count}), found {sparse_count}"));
        }
        let (indices, values) = (sparse.indices(), sparse.values());
        let index_size = indices.index_type().size();
        let index_name = format!("{name} sparse indices");
        self.check_range(&indices.view(), &index_name, indices.offset(), sparse_count, index_size)?;
        self.check_range(&values.view(), &format!("{name} sparse values"), values.offset(), sparse_count, accessor.size())?;
        // Rising and below the count, or the crate's sparse reader drops the rest unseen.
        let view = indices.view();
        let stride = view.stride().unwrap_or(index_size);
        let bytes = self.view_bytes(&view, &index_name)?;
        let mut previous: Option<u64> = None;
        for entry in 0..sparse_count {
            let at = indices.offset() + entry * stride;
            let raw = bytes
                .get(at..at + index_size)
                .map_or(u64::MAX, |field| field.iter().rev().fold(0u64, |value, &byte| value << 8 | u64::from(byte)));
            if raw >= count as u64 || previous.is_some_and(|previous| raw <= previous) {
                return Err(located(
                    self.path,
                    self.offset_in_file(&view, at as u64),
                    format!("{index_name}: entry {entry}: expected a rising element index below {count}, found {raw}"),
                ));
            }
            previous = Some(raw);
        }
        Ok(())
    }

    pub(super) fn charge(&self, bytes: usize, name: &str) -> Result<(), FormatError> {
        let left = self.budget.get();
        if bytes > left {
            return Err(error(
                self.path,
                format!(
                    "{name}: expected at most {} MiB of accessor data in all, found this accessor would pass it ({bytes} bytes more)",
                    MAX_DECODED_BYTES >> 20
                ),
            ));
        }
        self.budget.set(left - bytes);
        Ok(())
    }

    /// The components of a preflighted accessor, in order, through the crate's iterator.
    fn read<E: Element>(&self, accessor: &Accessor<'a>, name: &str) -> Result<Vec<f64>, FormatError> {
        let buffers = self.buffers;
        let mut out = Vec::with_capacity(accessor.count() * accessor.dimensions().multiplicity());
        // No bufferView and no sparse: zeros, as the spec says (the crate yields nothing).
        if accessor.view().is_none() && accessor.sparse().is_none() {
            out.resize(out.capacity(), 0.0);
            return Ok(out);
        }
        let iter = Iter::<E>::new(accessor.clone(), |buffer: gltf::Buffer<'_>| buffers.get(buffer.index()).map(|data| &data[..]))
            .ok_or_else(|| error(self.path, format!("{name}: expected its data in its buffer, found it missing")))?;
        for element in iter {
            element.append(&mut out);
        }
        Ok(out)
    }

    /// An accessor's elements of `N` components (SCALAR, VEC2..4, or MAT4 for 16), converted one
    /// component at a time by `convert`, whose error ends the sentence "expected ...".
    fn decode<T, const N: usize>(
        &self,
        accessor: &Accessor<'a>,
        what: &str,
        allowed: &[DataType],
        convert: &dyn Fn(f64, DataType, bool) -> Result<T, String>,
    ) -> Result<Vec<[T; N]>, FormatError>
    where
        T: Copy + Default,
    {
        let name = format!("accessor {} ({what})", accessor.index());
        let width = match N {
            1 => Dimensions::Scalar,
            2 => Dimensions::Vec2,
            3 => Dimensions::Vec3,
            4 => Dimensions::Vec4,
            _ => Dimensions::Mat4,
        };
        self.preflight(accessor, &name, width, allowed)?;
        let count = accessor.count();
        self.charge(count.saturating_mul(N).saturating_mul(std::mem::size_of::<f64>()), &name)?;
        macro_rules! components {
            ($shape:ident) => {
                match accessor.data_type() {
                    DataType::I8 => self.read::<$shape<i8>>(accessor, &name),
                    DataType::U8 => self.read::<$shape<u8>>(accessor, &name),
                    DataType::I16 => self.read::<$shape<i16>>(accessor, &name),
                    DataType::U16 => self.read::<$shape<u16>>(accessor, &name),
                    DataType::U32 => self.read::<$shape<u32>>(accessor, &name),
                    DataType::F32 => self.read::<$shape<f32>>(accessor, &name),
                }
            };
        }
        let raw = match width {
            Dimensions::Scalar => components!(Scalar),
            Dimensions::Vec2 => components!(Vector2),
            Dimensions::Vec3 => components!(Vector3),
            Dimensions::Vec4 => components!(Vector4),
            _ => components!(Matrix4),
        }?;
        let (component, normalized) = (accessor.data_type(), accessor.normalized());
        let mut values = Vec::with_capacity(count);
        for (element, chunk) in raw.chunks_exact(N).enumerate() {
            let mut value = [T::default(); N];
            for (slot, &raw) in value.iter_mut().zip(chunk) {
                *slot = convert(raw, component, normalized).map_err(|expected| {
                    located(self.path, self.element_offset(accessor, element), format!("{name}: element {element}: {expected}"))
                })?;
            }
            values.push(value);
        }
        Ok(values)
    }

    /// Floats, dequantized when normalized, each finite.
    pub(super) fn floats<const N: usize>(
        &self,
        accessor: &Accessor<'a>,
        what: &str,
        allowed: &[DataType],
    ) -> Result<Vec<[f32; N]>, FormatError> {
        self.decode::<f32, N>(accessor, what, allowed, &|raw, component, normalized| {
            let value = if normalized { dequantize(raw, component) } else { raw } as f32;
            if value.is_finite() {
                Ok(value)
            } else {
                Err(format!("expected a finite number, found {value}"))
            }
        })
    }

    /// Unsigned integers; with `below`, each must be less than its first part, which its second
    /// part explains in errors.
    pub(super) fn uints<const N: usize>(
        &self,
        accessor: &Accessor<'a>,
        what: &str,
        allowed: &[DataType],
        below: Option<(u64, &str)>,
    ) -> Result<Vec<[u32; N]>, FormatError> {
        self.decode::<u32, N>(accessor, what, allowed, &|raw, _, _| match below {
            Some((limit, meaning)) if raw >= limit as f64 => {
                Err(format!("expected a value below {limit} ({meaning}), found {raw}"))
            }
            _ => Ok(raw as u32),
        })
    }

    /// Where an element of a plain (not sparse) accessor lies in the file, if in a GLB's BIN chunk.
    pub(super) fn element_offset(&self, accessor: &Accessor<'_>, element: usize) -> Option<u64> {
        if accessor.sparse().is_some() {
            return None;
        }
        let view = accessor.view()?;
        let stride = view.stride().unwrap_or(accessor.size()) as u64;
        self.offset_in_file(&view, (accessor.offset() as u64).saturating_add(stride.saturating_mul(element as u64)))
    }
}

// ---------------------------------------------------------------------------------------------
