//! The BVH text read into a [`Bvh`]: its hierarchy, its frame header and its frames, every error
//! at its line.

use std::path::Path;

use glam::DVec3;

use super::{Bvh, BvhJoint, ChannelKind, MAX_JOINTS, MAX_MAGNITUDE};
use crate::formats::{files, FormatError};

/// The words of a text, each with its line, and what is left of a line.
struct Words<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    line: usize,
    rest: &'a str,
}

impl<'a> Words<'a> {
    fn new(text: &'a str) -> Words<'a> {
        Words { lines: text.lines().enumerate(), line: 0, rest: "" }
    }

    /// The next word, with its line (1-based).
    fn next(&mut self) -> Option<(usize, &'a str)> {
        loop {
            let trimmed = self.rest.trim_start();
            if !trimmed.is_empty() {
                let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
                self.rest = &trimmed[end..];
                return Some((self.line, &trimmed[..end]));
            }
            let (index, line) = self.lines.next()?;
            self.line = index + 1;
            self.rest = line;
        }
    }

    /// The rest of the current line, trimmed: a joint's name, which may hold spaces.
    fn rest_of_line(&mut self) -> &'a str {
        std::mem::take(&mut self.rest).trim()
    }

    /// The next line that holds anything, with its number.
    fn next_line(&mut self) -> Option<(usize, &'a str)> {
        self.rest = "";
        loop {
            let (index, line) = self.lines.next()?;
            self.line = index + 1;
            if !line.trim().is_empty() {
                return Some((self.line, line));
            }
        }
    }
}

fn number(path: &Path, (line, word): (usize, &str), what: &str) -> Result<f64, FormatError> {
    match word.parse::<f64>() {
        Ok(value) if value.is_finite() && value.abs() <= MAX_MAGNITUDE => Ok(value),
        _ => Err(FormatError::at_line(
            path,
            line,
            format!("expected {what}, a finite number of at most {MAX_MAGNITUDE:e}, found {}", files::quoted(word)),
        )),
    }
}

/// Parses a BVH text; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<Bvh, FormatError> {
    let text = text.trim_start_matches('\u{feff}');
    let mut reader = Reader { words: Words::new(text), path };
    match reader.words.next() {
        Some((_, word)) if word.eq_ignore_ascii_case("HIERARCHY") => {}
        Some((line, word)) => {
            return Err(FormatError::at_line(path, line, format!("expected HIERARCHY, found {}", files::quoted(word))))
        }
        None => return Err(reader.end("HIERARCHY")),
    }
    let (joints, channels) = reader.hierarchy()?;
    let (declared_frames, frame_time) = reader.frame_header()?;
    // The values: never more than the text holds (no allocation from the declared count).
    let (values, frames, mut warnings) = match channels {
        0 => (Vec::new(), usize::try_from(declared_frames).unwrap_or(usize::MAX).min(1), Vec::new()),
        _ => reader.frames(channels)?,
    };
    if channels > 0 && frames as u64 != declared_frames {
        warnings.push(format!("Frames: says {declared_frames}, the file has {frames}: {frames} are played"));
    }
    Ok(Bvh { joints, frame_time, channels, frames, values, warnings })
}

/// The words of a BVH text and the file they name in errors.
struct Reader<'t, 'p> {
    words: Words<'t>,
    path: &'p Path,
}

/// A block being read: the joint it belongs to, whether it has its OFFSET yet, whether it is an
/// End Site.
#[derive(Clone, Copy)]
struct Open {
    joint: usize,
    has_offset: bool,
    end_site: bool,
}

impl<'t> Reader<'t, '_> {
    fn error(&self, line: usize, message: impl Into<String>) -> FormatError {
        FormatError::at_line(self.path, line, message)
    }

    /// The file ended where `what` was expected.
    fn end(&self, what: &str) -> FormatError {
        self.error(self.words.line.max(1), format!("expected {what}, found the end of the file"))
    }

    fn next(&mut self, what: &str) -> Result<(usize, &'t str), FormatError> {
        self.words.next().ok_or_else(|| self.end(what))
    }

    /// The HIERARCHY section up to MOTION: the joints in the file's order and the channel values
    /// a frame holds.
    fn hierarchy(&mut self) -> Result<(Vec<BvhJoint>, usize), FormatError> {
        let mut joints: Vec<BvhJoint> = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        let mut channels = 0usize;
        loop {
            let (line, word) = self.next("MOTION")?;
            let keyword = word.to_ascii_uppercase();
            match keyword.as_str() {
                "ROOT" | "JOINT" | "END" => {
                    let joint = self.joint((line, word), &joints, &open)?;
                    joints.push(BvhJoint { first_value: channels, ..joint });
                    open.push(Open { joint: joints.len() - 1, has_offset: false, end_site: keyword == "END" });
                }
                "OFFSET" => {
                    let Some(block) = open.last_mut() else { return Err(self.error(line, "expected OFFSET inside a joint")) };
                    if block.has_offset {
                        return Err(self.error(line, "expected one OFFSET a joint, found a second"));
                    }
                    block.has_offset = true;
                    let mut offset = [0.0; 3];
                    for value in &mut offset {
                        *value = number(self.path, self.next("an OFFSET value")?, "an OFFSET value")?;
                    }
                    joints[block.joint].offset = DVec3::from_array(offset);
                }
                "CHANNELS" => {
                    let Some(&block) = open.last() else { return Err(self.error(line, "expected CHANNELS inside a joint")) };
                    if !joints[block.joint].channels.is_empty() || block.end_site {
                        return Err(self.error(line, "expected one CHANNELS a joint and none in an End Site"));
                    }
                    let kinds = self.channels()?;
                    joints[block.joint].first_value = channels;
                    channels += kinds.len();
                    joints[block.joint].channels = kinds;
                }
                "}" => {
                    if open.pop().is_none() {
                        return Err(self.error(line, "expected ROOT or MOTION, found }"));
                    }
                }
                "MOTION" if open.is_empty() => break,
                _ => {
                    let expected = if open.is_empty() { "ROOT or MOTION" } else { "OFFSET, CHANNELS, JOINT, End Site or }" };
                    return Err(self.error(line, format!("expected {expected}, found {}", files::quoted(word))));
                }
            }
        }
        if joints.is_empty() {
            return Err(self.error(self.words.line, "expected a ROOT before MOTION, found none"));
        }
        Ok((joints, channels))
    }

    /// A joint opened by `word` (ROOT, JOINT or End Site) on `line`, up to its `{`, with its
    /// parent (the innermost open block) and its name.
    fn joint(&mut self, (line, word): (usize, &'t str), joints: &[BvhJoint], open: &[Open]) -> Result<BvhJoint, FormatError> {
        let keyword = word.to_ascii_uppercase();
        let in_end_site = open.last().is_some_and(|block| block.end_site);
        if (keyword == "ROOT") != open.is_empty() || in_end_site {
            let expected = if open.is_empty() {
                "ROOT or MOTION"
            } else if in_end_site {
                "OFFSET or }"
            } else {
                "JOINT"
            };
            return Err(self.error(line, format!("expected {expected}, found {word}")));
        }
        if joints.len() >= MAX_JOINTS {
            return Err(self.error(line, format!("expected at most {MAX_JOINTS} joints, found more")));
        }
        let parent = open.last().map(|block| block.joint);
        if keyword == "END" {
            let site = self.words.next().map(|(_, word)| word).unwrap_or_default();
            if !site.eq_ignore_ascii_case("Site") {
                return Err(self.error(line, format!("expected End Site, found End {}", files::quoted(site))));
            }
        }
        // A `{` may end the name's line, or start the next.
        let rest = self.words.rest_of_line();
        let (written, braced) = match rest.strip_suffix('{') {
            Some(name) => (name.trim(), true),
            None => (rest, false),
        };
        let name = if keyword == "END" {
            format!("{} End", parent.map(|parent| joints[parent].name.as_str()).unwrap_or_default())
        } else {
            written.to_string()
        };
        if !braced {
            match self.words.next() {
                Some((_, "{")) => {}
                Some((line, word)) => return Err(self.error(line, format!("expected {{, found {}", files::quoted(word)))),
                None => return Err(self.end("{")),
            }
        }
        Ok(BvhJoint { name, parent, offset: DVec3::ZERO, channels: Vec::new(), first_value: 0 })
    }

    /// A CHANNELS line after its keyword: the count, then each channel once.
    fn channels(&mut self) -> Result<Vec<ChannelKind>, FormatError> {
        let (line, word) = self.next("the channel count")?;
        let count =
            word.parse::<usize>().ok().filter(|&count| count <= 6).ok_or_else(|| {
                self.error(line, format!("expected a channel count from 0 to 6, found {}", files::quoted(word)))
            })?;
        let mut kinds = Vec::with_capacity(count);
        for _ in 0..count {
            let (line, word) = self.next("a channel name")?;
            let kind = ChannelKind::parse(word).ok_or_else(|| {
                self.error(line, format!("expected a channel (Xposition ... Zrotation), found {}", files::quoted(word)))
            })?;
            if kinds.contains(&kind) {
                return Err(self.error(line, format!("expected each channel once, found {word} twice")));
            }
            kinds.push(kind);
        }
        Ok(kinds)
    }

    /// `Frames: N` and `Frame Time: T`.
    fn frame_header(&mut self) -> Result<(u64, f64), FormatError> {
        let (line, word) = self.next("Frames:")?;
        let declared = match word.to_ascii_lowercase().strip_prefix("frames:") {
            Some("") => self.next("the frame count")?,
            Some(count) => (line, &word[word.len() - count.len()..]),
            None => return Err(self.error(line, format!("expected Frames:, found {}", files::quoted(word)))),
        };
        let declared_frames = declared
            .1
            .parse::<u64>()
            .map_err(|_| self.error(declared.0, format!("expected a frame count, found {}", files::quoted(declared.1))))?;
        let (line, word) = self.next("Frame Time:")?;
        let time_word = self.next("Frame Time:")?;
        let frame_time_word = if word.eq_ignore_ascii_case("Frame") && time_word.1.eq_ignore_ascii_case("Time:") {
            self.next("the frame time")?
        } else {
            return Err(self.error(line, format!("expected Frame Time:, found {}", files::quoted(word))));
        };
        let frame_time = number(self.path, frame_time_word, "the frame time in seconds")?;
        if frame_time <= 0.0 {
            return Err(self.error(frame_time_word.0, "expected a frame time above 0 seconds"));
        }
        Ok((declared_frames, frame_time))
    }

    /// The frames' lines, `channels` values each: the values, the frame count and what was
    /// forgiven (a last frame cut short is left out).
    fn frames(&mut self, channels: usize) -> Result<(Vec<f32>, usize, Vec<String>), FormatError> {
        let (mut values, mut frames, mut warnings) = (Vec::new(), 0usize, Vec::new());
        let short = |line: usize, found: usize| {
            FormatError::at_line(
                self.path,
                line,
                format!("expected {channels} values a frame (the channels the hierarchy declares), found {found}"),
            )
        };
        let mut truncated = None;
        while let Some((line, text)) = self.words.next_line() {
            let start = values.len();
            for word in text.split_whitespace() {
                values.push(number(self.path, (line, word), "a channel value")? as f32);
            }
            let found = values.len() - start;
            if found != channels {
                values.truncate(start);
                if truncated.is_some() || found > channels {
                    return Err(short(line, found));
                }
                truncated = Some((line, found));
                continue;
            }
            if let Some((line, found)) = truncated {
                return Err(short(line, found));
            }
            frames += 1;
        }
        if let Some((line, found)) = truncated {
            warnings.push(format!("line {line}: the last frame has {found} of its {channels} values (a cut file?): left out"));
        }
        Ok((values, frames, warnings))
    }
}
