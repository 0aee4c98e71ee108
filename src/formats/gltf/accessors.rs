//! Accessors: every element range checked against its bufferView and buffer before a byte is
//! read, components dequantized as the spec says, decoded bytes capped.

use super::*;

// Accessors
// ---------------------------------------------------------------------------------------------

/// The parsed document and its buffers, with checked accessor reads.
pub(super) struct Data<'a> {
    pub(super) path: &'a Path,
    pub(super) root: &'a Root,
    pub(super) buffers: &'a [BufferData],
    /// Decoded bytes still allowed (see [`MAX_DECODED_BYTES`]).
    pub(super) budget: Cell<usize>,
}

/// The bytes an accessor's elements lie in, range-checked: element i starts at `i × stride`.
pub(super) struct ElementRange<'b> {
    pub(super) bytes: &'b [u8],
    pub(super) stride: usize,
    pub(super) file_offset: Option<u64>,
}

impl ElementRange<'_> {
    pub(super) fn offset_of(&self, element: usize) -> Option<u64> {
        self.file_offset.map(|offset| offset.saturating_add(element.saturating_mul(self.stride) as u64))
    }
}

/// How raw components become values: the raw number, its component type and the normalized flag,
/// to a value or the end of the sentence "expected ...".
pub(super) type Convert<'c, T> = &'c dyn Fn(f64, ComponentType, bool) -> Result<T, String>;

/// A bufferView's bytes, range-checked against its buffer.
pub(super) struct ViewBytes<'b> {
    pub(super) bytes: &'b [u8],
    /// Where the view starts in the file, when its buffer is the GLB's BIN chunk.
    pub(super) file_offset: Option<u64>,
    pub(super) stride: Option<usize>,
}

impl<'a> Data<'a> {
    pub(super) fn view(&self, view_index: usize, what: &str) -> Result<ViewBytes<'a>, FormatError> {
        let views = &self.root.buffer_views;
        let view = views.get(view_index).ok_or_else(|| {
            error(self.path, format!("{what}: expected bufferView {view_index} to exist, found {} bufferViews", views.len()))
        })?;
        let buffer_index = view.buffer.value();
        let buffer = self.buffers.get(buffer_index).ok_or_else(|| {
            error(
                self.path,
                format!("bufferView {view_index}: expected buffer {buffer_index} to exist, found {} buffers", self.buffers.len()),
            )
        })?;
        let offset = view.byte_offset.map_or(0, |offset| offset.0);
        let end = u128::from(offset) + u128::from(view.byte_length.0);
        let file_offset = buffer.file_offset.map(|start| start.saturating_add(offset));
        let range = usize::try_from(offset).ok().zip(usize::try_from(end).ok());
        let Some(bytes) = range.and_then(|(start, end)| buffer.bytes.get(start..end)) else {
            return Err(located(
                self.path,
                file_offset,
                format!(
                    "bufferView {view_index} ({what}): expected bytes {offset}..{end} to lie within buffer {buffer_index} ({} bytes)",
                    buffer.bytes.len()
                ),
            ));
        };
        Ok(ViewBytes { bytes, file_offset, stride: view.byte_stride.map(|stride| stride.0) })
    }

    /// Checks that `count` elements from `byte_offset` fit in the bufferView. `packed` ignores
    /// the view's byteStride (sparse indices and values are always tightly packed).
    pub(super) fn element_range(
        &self,
        name: &str,
        view_index: usize,
        byte_offset: u64,
        count: usize,
        element_size: usize,
        packed: bool,
    ) -> Result<ElementRange<'a>, FormatError> {
        let ViewBytes { bytes: view_bytes, file_offset: view_offset, stride: view_stride } = self.view(view_index, name)?;
        let stride = match view_stride {
            Some(stride) if !packed => stride,
            _ => element_size,
        };
        if stride < element_size {
            return Err(located(
                self.path,
                view_offset,
                format!("{name}: expected bufferView {view_index}'s byteStride to be at least the element size {element_size}, found {stride}"),
            ));
        }
        let needed = match count.checked_sub(1) {
            None => u128::from(byte_offset),
            Some(last) => {
                (stride as u128).saturating_mul(last as u128).saturating_add(u128::from(byte_offset) + element_size as u128)
            }
        };
        let file_offset = view_offset.map(|offset| offset.saturating_add(byte_offset));
        let bytes = usize::try_from(byte_offset).ok().and_then(|start| view_bytes.get(start..));
        match bytes {
            Some(bytes) if needed <= view_bytes.len() as u128 => Ok(ElementRange { bytes, stride, file_offset }),
            _ => Err(located(
                self.path,
                file_offset,
                format!(
                    "{name}: expected {count} elements of {element_size} bytes (stride {stride}) from byte {byte_offset} to fit in \
                     bufferView {view_index} ({} bytes), but they need {needed}",
                    view_bytes.len()
                ),
            )),
        }
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

    /// Reads an accessor of `N` components per element (SCALAR, VEC2..4, or MAT4 for 16).
    pub(super) fn decode<T: Copy + Default, const N: usize>(
        &self,
        index: usize,
        what: &str,
        allowed: &[ComponentType],
        convert: Convert<'_, T>,
    ) -> Result<Vec<[T; N]>, FormatError> {
        let accessors = &self.root.accessors;
        let accessor = accessors.get(index).ok_or_else(|| {
            error(self.path, format!("{what}: expected accessor {index} to exist, found {} accessors", accessors.len()))
        })?;
        let name = format!("accessor {index} ({what})");
        let expected = type_of_width(N);
        match accessor.type_ {
            Checked::Valid(found) if Some(found) == expected => {}
            Checked::Valid(found) => {
                return Err(error(self.path, format!("{name}: expected type {}, found {}", width_name(N), type_name(found))));
            }
            Checked::Invalid => {
                return Err(error(self.path, format!("{name}: expected type {}, found an unknown type", width_name(N))))
            }
        }
        let allowed_names = allowed.iter().map(|component| component_name(*component)).collect::<Vec<_>>().join(", ");
        let component = match accessor.component_type {
            Checked::Valid(GenericComponentType(component)) if allowed.contains(&component) => component,
            Checked::Valid(GenericComponentType(component)) => {
                return Err(error(
                    self.path,
                    format!("{name}: expected componentType {allowed_names}, found {}", component_name(component)),
                ));
            }
            Checked::Invalid => {
                return Err(error(self.path, format!("{name}: expected componentType {allowed_names}, found an unknown one")));
            }
        };
        let count = usize::try_from(accessor.count.0).unwrap_or(usize::MAX);
        let element_size = N * component.size();
        let range = match accessor.buffer_view {
            Some(view) => Some(self.element_range(
                &name,
                view.value(),
                accessor.byte_offset.map_or(0, |offset| offset.0),
                count,
                element_size,
                false,
            )?),
            None => None,
        };
        self.charge(count.saturating_mul(N).saturating_mul(std::mem::size_of::<T>()), &name)?;

        let mut values = match &range {
            Some(range) => {
                let mut values = Vec::with_capacity(count);
                for element in 0..count {
                    values.push(self.decode_element(range, element, component, accessor.normalized, convert, &name)?);
                }
                values
            }
            // No bufferView: zeros, as the spec says, unless sparse values replace some.
            None => vec![[T::default(); N]; count],
        };
        if let Some(sparse) = &accessor.sparse {
            let sparse_count = usize::try_from(sparse.count.0).unwrap_or(usize::MAX);
            if sparse_count > count {
                return Err(error(
                    self.path,
                    format!("{name}: expected sparse.count at most count ({count}), found {sparse_count}"),
                ));
            }
            let index_component = match sparse.indices.component_type {
                Checked::Valid(IndexComponentType(component)) if INDEX.contains(&component) => component,
                _ => {
                    return Err(error(
                        self.path,
                        format!("{name}: expected sparse indices of UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT"),
                    ));
                }
            };
            let index_name = format!("{name} sparse indices");
            let indices = self.element_range(
                &index_name,
                sparse.indices.buffer_view.value(),
                sparse.indices.byte_offset.0,
                sparse_count,
                index_component.size(),
                true,
            )?;
            let value_name = format!("{name} sparse values");
            let replacements = self.element_range(
                &value_name,
                sparse.values.buffer_view.value(),
                sparse.values.byte_offset.0,
                sparse_count,
                element_size,
                true,
            )?;
            for entry in 0..sparse_count {
                let at = entry.saturating_mul(index_component.size());
                let target = read_component(indices.bytes, at, index_component).map_or(usize::MAX, |raw| raw as usize);
                let value = self.decode_element(&replacements, entry, component, accessor.normalized, convert, &value_name)?;
                let Some(slot) = values.get_mut(target) else {
                    return Err(located(
                        self.path,
                        indices.offset_of(entry),
                        format!("{index_name}: entry {entry}: expected an element index below {count}, found {target}"),
                    ));
                };
                *slot = value;
            }
        }
        Ok(values)
    }

    pub(super) fn decode_element<T: Copy + Default, const N: usize>(
        &self,
        range: &ElementRange<'_>,
        element: usize,
        component: ComponentType,
        normalized: bool,
        convert: Convert<'_, T>,
        name: &str,
    ) -> Result<[T; N], FormatError> {
        let start = element.saturating_mul(range.stride);
        let mut value = [T::default(); N];
        for (slot_index, slot) in value.iter_mut().enumerate() {
            let at = start.saturating_add(slot_index * component.size());
            let Some(raw) = read_component(range.bytes, at, component) else {
                return Err(located(
                    self.path,
                    range.offset_of(element),
                    format!("{name}: element {element} lies outside its bufferView"),
                ));
            };
            *slot = convert(raw, component, normalized).map_err(|expected| {
                located(self.path, range.offset_of(element), format!("{name}: element {element}: {expected}"))
            })?;
        }
        Ok(value)
    }

    pub(super) fn floats<const N: usize>(
        &self,
        index: usize,
        what: &str,
        allowed: &[ComponentType],
    ) -> Result<Vec<[f32; N]>, FormatError> {
        self.decode::<f32, N>(index, what, allowed, &|raw, component, normalized| {
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
        index: usize,
        what: &str,
        allowed: &[ComponentType],
        below: Option<(u64, &str)>,
    ) -> Result<Vec<[u32; N]>, FormatError> {
        self.decode::<u32, N>(index, what, allowed, &|raw, _, _| match below {
            Some((limit, meaning)) if raw >= limit as f64 => {
                Err(format!("expected a value below {limit} ({meaning}), found {raw}"))
            }
            _ => Ok(raw as u32),
        })
    }

    /// Where an element of a plain (not sparse) accessor lies in the file, if in a GLB's BIN chunk.
    pub(super) fn element_offset(&self, index: usize, element: usize) -> Option<u64> {
        let accessor = self.root.accessors.get(index)?;
        if accessor.sparse.is_some() {
            return None;
        }
        let view = self.root.buffer_views.get(accessor.buffer_view?.value())?;
        let start = self.buffers.get(view.buffer.value())?.file_offset?;
        let width = match accessor.type_ {
            Checked::Valid(found) => found.multiplicity(),
            Checked::Invalid => return None,
        };
        let element_size = match accessor.component_type {
            Checked::Valid(GenericComponentType(component)) => width * component.size(),
            Checked::Invalid => return None,
        };
        let stride = view.byte_stride.map_or(element_size, |stride| stride.0) as u64;
        let offset = start
            .saturating_add(view.byte_offset.map_or(0, |offset| offset.0))
            .saturating_add(accessor.byte_offset.map_or(0, |offset| offset.0));
        Some(offset.saturating_add(stride.saturating_mul(element as u64)))
    }
}

pub(super) fn read_component(bytes: &[u8], at: usize, component: ComponentType) -> Option<f64> {
    let field = bytes.get(at..at.checked_add(component.size())?)?;
    Some(match component {
        ComponentType::I8 => f64::from(i8::from_le_bytes(field.try_into().ok()?)),
        ComponentType::U8 => f64::from(u8::from_le_bytes(field.try_into().ok()?)),
        ComponentType::I16 => f64::from(i16::from_le_bytes(field.try_into().ok()?)),
        ComponentType::U16 => f64::from(u16::from_le_bytes(field.try_into().ok()?)),
        ComponentType::U32 => f64::from(u32::from_le_bytes(field.try_into().ok()?)),
        ComponentType::F32 => f64::from(f32::from_le_bytes(field.try_into().ok()?)),
    })
}

/// A normalized integer's value, as the spec defines it (signed ones clamp at -1).
pub(super) fn dequantize(raw: f64, component: ComponentType) -> f64 {
    match component {
        ComponentType::I8 => (raw / 127.0).max(-1.0),
        ComponentType::U8 => raw / 255.0,
        ComponentType::I16 => (raw / 32767.0).max(-1.0),
        ComponentType::U16 => raw / 65535.0,
        ComponentType::U32 => raw / f64::from(u32::MAX),
        ComponentType::F32 => raw,
    }
}

pub(super) fn type_of_width(width: usize) -> Option<Type> {
    match width {
        1 => Some(Type::Scalar),
        2 => Some(Type::Vec2),
        3 => Some(Type::Vec3),
        4 => Some(Type::Vec4),
        16 => Some(Type::Mat4),
        _ => None,
    }
}

pub(super) fn width_name(width: usize) -> &'static str {
    type_of_width(width).map_or("?", type_name)
}

pub(super) fn type_name(found: Type) -> &'static str {
    match found {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

pub(super) fn component_name(component: ComponentType) -> &'static str {
    match component {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

// ---------------------------------------------------------------------------------------------
