//! Named clip ranges: one long timeline cut into clips by frame numbers. Authors put the table in
//! several places, and each is read:
//! - the "animation ranges" text files that Psionic's free Milkshape models ship beside the .ms3d
//!   (`FIRST-LAST NAME` lines between prose), and `--ranges FILE`: strict, a line that looks like
//!   a range must be a well-formed one;
//! - a table inside other text ([`table_in`]): a Milkshape model's comment (`2,20,walk`) or a
//!   readme named after the model (zombie.txt's `2-20  Walk cycle 1` between paragraphs), where
//!   whatever is not a range line is prose and skipped;
//! - the `--clips` argument, which does the same from the command line.
//!
//! Read by hand: a handful of lines between free prose, which no crate covers.

use ahash::AHashMap as HashMap;
use std::path::{Path, PathBuf};

use crate::anim::{ClipRange, RangeUnit};
use crate::formats::{files, FormatError};

/// Far beyond any authored clip (almost four days at 30 frames a second), so a larger bound is a
/// typo or an overflow, caught here before it becomes a huge sample count downstream.
const MAX_BOUND: f64 = 10_000_000.0;

/// What a bound should look like, for error messages.
const BOUND_SYNTAX: &str = "a whole frame number (e.g. 14) or seconds with an 's' suffix (e.g. 0.5s)";

/// Parses a ranges file. Lines that start with a number and a dash (after leading whitespace) are
/// range lines, `FIRST-LAST NAME`; every other line, and `#` or `//` comments, are prose and skipped.
/// A range line that is malformed is an error at its line, as is a file with no range lines at all.
pub fn parse_ranges_file(text: &str, path: &Path) -> Result<Vec<ClipRange>, FormatError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut ranges = Vec::new();
    let mut lines_by_name: HashMap<String, usize> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.starts_with('#') || line.starts_with("//") || !line.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        // Prose may start with a number ("20 ranges and 300 frames"); only a dash after it makes a
        // range line. The bound after the dash is not required to be a digit, so `12-abc` is reported.
        let Some((first, after_dash)) = split_at_dash(line) else { continue };
        let error = |message: String| FormatError::at_line(path, number, message);
        let (last, name) = after_dash.split_once(char::is_whitespace).unwrap_or((after_dash, ""));
        if last.is_empty() {
            return Err(error(format!("expected FIRST-LAST NAME, found nothing after the dash in {line:?}")));
        }
        let (first, last, unit) = parse_span(first, last).map_err(error)?;
        let name = name.trim();
        if name.is_empty() {
            return Err(error(format!("range {line:?} has no name: expected FIRST-LAST NAME, e.g. \"1-14 Walk\"")));
        }
        if let Some(previous) = lines_by_name.insert(name.to_string(), number) {
            return Err(error(format!("duplicate range name {name:?}: already used on line {previous}")));
        }
        ranges.push(ClipRange { name: name.to_string(), first, last, unit });
    }
    if ranges.is_empty() {
        return Err(FormatError::in_file(path, "no range lines: expected lines like \"1-14 Walk\" (FIRST-LAST NAME)"));
    }
    Ok(ranges)
}

/// Parses the value of `--clips`: `NAME=FIRST-LAST` items separated by commas, with the bounds
/// written as in a ranges file. Names may hold spaces but not `=` or `,`.
pub fn parse_clips_argument(text: &str) -> Result<Vec<ClipRange>, String> {
    let mut ranges: Vec<ClipRange> = Vec::new();
    for (index, item) in text.split(',').enumerate() {
        let number = index + 1;
        let error = |message: String| format!("--clips item {number} ({item:?}): {message}");
        if item.trim().is_empty() {
            return Err(error("empty item: expected NAME=FIRST-LAST between commas".to_string()));
        }
        let Some((name, span)) = item.split_once('=') else {
            return Err(error("expected NAME=FIRST-LAST, found no '='".to_string()));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(error("expected NAME=FIRST-LAST, found no name before '='".to_string()));
        }
        let span = span.trim();
        let Some((first, last)) = split_at_dash(span) else {
            return Err(error(format!("expected NAME=FIRST-LAST, found {span:?} after '='")));
        };
        if last.is_empty() {
            return Err(error(format!("expected NAME=FIRST-LAST, found nothing after the dash in {span:?}")));
        }
        let (first, last, unit) = parse_span(first, last).map_err(error)?;
        if let Some(previous) = ranges.iter().position(|range| range.name == name) {
            return Err(error(format!("name {name:?} is already used by item {}", previous + 1)));
        }
        ranges.push(ClipRange { name: name.to_string(), first, last, unit });
    }
    Ok(ranges)
}

/// A clip table inside other text: lines `FIRST-LAST NAME` or `FIRST,LAST,NAME` (frames, or
/// seconds with an `s`), every other line prose, malformed ones and repeated names skipped (a
/// readme is not a ranges file, and a year range in its credits is no error). None unless at
/// least two lines are ranges: one number range in a paragraph is not a table.
pub fn table_in(text: &str) -> Option<Vec<ClipRange>> {
    let mut ranges: Vec<ClipRange> = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches("//").trim_start_matches('#').trim();
        let Some((first, last, name)) = table_line(line) else { continue };
        let name = name.trim().trim_start_matches([',', ':', '-']).trim();
        let Ok((first, last, unit)) = parse_span(first, last) else { continue };
        if name.is_empty() || ranges.iter().any(|range| range.name == name) {
            continue;
        }
        ranges.push(ClipRange { name: name.to_string(), first, last, unit });
    }
    (ranges.len() >= 2).then_some(ranges)
}

/// A line's first bound, last bound and name, as `FIRST,LAST,NAME` or `FIRST-LAST NAME`.
fn table_line(line: &str) -> Option<(&str, &str, &str)> {
    let mut parts = line.splitn(3, ',');
    if let (Some(first), Some(last), Some(name)) = (parts.next(), parts.next(), parts.next()) {
        let (first, last) = (first.trim(), last.trim());
        if parse_bound(first).is_ok() && parse_bound(last).is_ok() {
            return Some((first, last, name));
        }
    }
    let (first, after_dash) = split_at_dash(line)?;
    let (last, name) = after_dash.split_once(char::is_whitespace).unwrap_or((after_dash, ""));
    Some((first, last, name))
}

/// Cuts the clips of a table found in other text ([`table_in`]) from `model`'s first animation:
/// those that fit in it, where at least two do. Says where they came from (`from`: "the model's
/// comment", "zombie.txt") in the model's notes, and which ranges were left out in its warnings.
/// Whether a table was cut.
pub fn cut_table(model: &mut crate::model::Model, ranges: &[ClipRange], from: &str) -> bool {
    let Some(animation) = model.animations.first() else { return false };
    let end = f64::from(animation.duration);
    let rate = animation.frame_rate.map(f64::from);
    let seconds = |range: &ClipRange, bound: f64| match range.unit {
        RangeUnit::Seconds => Some(bound),
        RangeUnit::Frames => rate.map(|rate| bound / rate),
    };
    let (fits, past): (Vec<ClipRange>, Vec<ClipRange>) = ranges
        .iter()
        .cloned()
        .partition(|range| seconds(range, range.last).is_some_and(|last| last <= end + 1e-3 / rate.unwrap_or(1.0)));
    if fits.len() < 2 || model.cut_clips(&fits).is_err() {
        return false;
    }
    let names: Vec<String> = fits.iter().map(|range| files::quoted(&range.name)).collect();
    model.stats.notes.push(format!("{} clips from the table in {from}: {}", fits.len(), names.join(", ")));
    if !past.is_empty() {
        let names: Vec<String> = past.iter().map(|range| files::quoted(&range.name)).collect();
        model.stats.warnings.push(format!(
            "the table in {from} names {} clips past the end of the animation ({:.3} s), left out: {}",
            past.len(),
            end,
            names.join(", ")
        ));
    }
    true
}

/// A text file named after the model beside it (`zombie.txt` beside `zombie.ms3d`, any case),
/// which may hold its clip table among other text.
pub fn text_beside(model: &Path) -> Option<PathBuf> {
    let stem = model.file_stem()?.to_str()?.to_lowercase();
    let folder = model.parent().filter(|folder| !folder.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = path.file_name().and_then(|name| name.to_str()).map(str::to_lowercase);
            name.is_some_and(|name| name == format!("{stem}.txt")) && path.is_file()
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// `model`'s first animation cut into the clips a ranges file names (they come first).
pub fn cut_by_file(model: &mut crate::model::Model, ranges_path: &Path) -> Result<(), FormatError> {
    let text = super::files::read_text(ranges_path, super::files::MAX_MODEL_BYTES)
        .map_err(|message| FormatError::in_file(ranges_path, message))?;
    let ranges = parse_ranges_file(&text, ranges_path)?;
    model.cut_clips(&ranges).map_err(|message| FormatError::in_file(ranges_path, message))
}

/// The Psionic ranges file beside a model: `<stem> animation ranges.txt`; else one whose name
/// before " animation ranges.txt" is the model's without its trailing digits, any case ("dwarf
/// animation ranges.txt" beside `dwarf1.ms3d`). Not any other: Psionic's folders hold several
/// models, each with its own.
pub fn ranges_file_beside(model: &Path) -> Option<PathBuf> {
    const SUFFIX: &str = " animation ranges.txt";
    let stem = model.file_stem()?.to_str()?;
    let exact = model.with_file_name(format!("{stem}{SUFFIX}"));
    if exact.is_file() {
        return Some(exact);
    }
    let folder = model.parent().filter(|folder| !folder.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let candidates: Vec<(PathBuf, String)> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?.to_lowercase();
            let prefix = name.strip_suffix(SUFFIX)?.to_string();
            path.is_file().then_some((path, prefix))
        })
        .collect();
    let base = stem.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_' || c == ' ').to_lowercase();
    candidates.into_iter().find(|(_, prefix)| *prefix == base).map(|(path, _)| path)
}

/// Psionic's files use '-'; an en dash is what a word processor turns it into.
fn is_dash(c: char) -> bool {
    c == '-' || c == '–'
}

/// Splits `FIRST-LAST...` into the first bound and what follows the dash (leading whitespace
/// trimmed), or None when no dash follows the first token.
fn split_at_dash(text: &str) -> Option<(&str, &str)> {
    let end = text.find(|c: char| c.is_whitespace() || is_dash(c)).unwrap_or(text.len());
    let (first, rest) = text.split_at(end);
    let mut chars = rest.trim_start().chars();
    match chars.next() {
        Some(c) if is_dash(c) && !first.is_empty() => Some((first, chars.as_str().trim_start())),
        _ => None,
    }
}

/// Both bounds of a span: same unit, in order, within [`MAX_BOUND`].
fn parse_span(first: &str, last: &str) -> Result<(f64, f64, RangeUnit), String> {
    let (first_value, first_unit) = parse_bound(first).map_err(|message| format!("first bound {message}"))?;
    let (last_value, last_unit) = parse_bound(last).map_err(|message| format!("last bound {message}"))?;
    if first_unit != last_unit {
        return Err(format!(
            "\"{first}-{last}\" mixes frames and seconds: expected both bounds in frames (1-14) or both in seconds (0.5s-1.25s)"
        ));
    }
    if first_value > last_value {
        return Err(format!("\"{first}-{last}\" runs backwards: expected FIRST <= LAST"));
    }
    Ok((first_value, last_value, first_unit))
}

/// One bound: ASCII digits with an optional fraction for seconds (`14`, `0.5s`). Checked by hand
/// first because `f64::from_str` also takes `inf`, `NaN`, `1e3` and signs.
fn parse_bound(token: &str) -> Result<(f64, RangeUnit), String> {
    let (digits, unit) = match token.strip_suffix('s') {
        Some(digits) => (digits, RangeUnit::Seconds),
        None => (token, RangeUnit::Frames),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (digits, None),
    };
    let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
    if !all_digits(whole) || !fraction.is_none_or(all_digits) {
        return Err(format!("{token:?} is not a number: expected {BOUND_SYNTAX}"));
    }
    if unit == RangeUnit::Frames && fraction.is_some() {
        return Err(format!("{token:?} is a fraction of a frame: expected {BOUND_SYNTAX}"));
    }
    match digits.parse::<f64>() {
        Ok(value) if value.is_finite() && value <= MAX_BOUND => Ok((value, unit)),
        _ => Err(format!("{token:?} is too large: expected at most {MAX_BOUND}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines copied from Psionic's "ninja animation ranges.txt": prose, ranges with tabs and
    /// dashes or parentheses in the names, a gap in the numbering, and the Irrlicht note.
    const NINJA: &str = "hey guys heres all the ranges for the ninja model, 20 ranges and 300 frames....Phew!!\n\
        \n\
        Please check the numbers carefully cus they dont follow any order\n\
        \n\
        1-14\tWalk (normal)\n\
        15-30\tStealth Walk\n\
        69-72\tUp to block position (play backwards to lower sword if you want)\n\
        166-173\tDeath 1 - Fall back onto ground\n\
        184-205\tIdle 1 - Breathe heavily\n\
        251-300\tIdle 3\n\
        \n\
        Psionic\n\
        \n\
        http://www.psionic3d.co.uk\n\
        \n\
        Note for Irrlicht: Irrlicht uses a 0-based frame index. So subtract 1 from each of the loops!";

    fn path() -> &'static Path {
        Path::new("ninja animation ranges.txt")
    }

    fn frames(name: &str, first: f64, last: f64) -> ClipRange {
        ClipRange { name: name.to_string(), first, last, unit: RangeUnit::Frames }
    }

    #[test]
    fn reads_the_ninja_lines() {
        let ranges = parse_ranges_file(NINJA, path()).unwrap();
        assert_eq!(ranges.len(), 6);
        assert_eq!(ranges[0], frames("Walk (normal)", 1.0, 14.0));
        assert_eq!(ranges[2], frames("Up to block position (play backwards to lower sword if you want)", 69.0, 72.0));
        assert_eq!(ranges[3], frames("Death 1 - Fall back onto ground", 166.0, 173.0));
        assert_eq!(ranges[5], frames("Idle 3", 251.0, 300.0));
    }

    #[test]
    fn accepts_bom_crlf_seconds_en_dash_and_comments() {
        let text = "\u{feff}# 1-5 retired\r\n// 6-9 also retired\r\n  0.5s - 1.25s  Wave hello \r\n3 – 7\tKick\r\n";
        let ranges = parse_ranges_file(text, path()).unwrap();
        let wave = ClipRange { name: "Wave hello".to_string(), first: 0.5, last: 1.25, unit: RangeUnit::Seconds };
        assert_eq!(ranges, vec![wave, frames("Kick", 3.0, 7.0)]);
    }

    #[test]
    fn malformed_range_lines_name_the_file_and_line() {
        let cases = [
            ("12-abc Walk", "not a number"),
            ("12-1x Walk", "not a number"),
            ("12x-14 Walk", "not a number"),
            ("1.5-3 Walk", "fraction of a frame"),
            ("1-0.5s Walk", "mixes frames and seconds"),
            ("30-15 Walk", "runs backwards"),
            ("1-14", "has no name"),
            ("1-14 \t ", "has no name"),
            ("1-", "nothing after the dash"),
            ("1-99999999 Walk", "too large"),
            ("1-99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999 Walk", "too large"),
        ];
        for (line, expected) in cases {
            let text = format!("prose first\r\n\r\n{line}\r\n");
            let message = parse_ranges_file(&text, path()).unwrap_err().to_string();
            assert!(message.contains("ninja animation ranges.txt:3:"), "{line:?}: {message}");
            assert!(message.contains(expected), "{line:?}: {message}");
        }
    }

    #[test]
    fn duplicate_names_name_both_lines() {
        let message = parse_ranges_file("1-14 Walk\n15-30 Run\n31-40 Walk\n", path()).unwrap_err().to_string();
        assert!(message.contains("ninja animation ranges.txt:3:"), "{message}");
        assert!(message.contains("line 1"), "{message}");
    }

    #[test]
    fn a_file_of_prose_alone_is_an_error() {
        let message = parse_ranges_file("20 ranges and 300 frames\n", path()).unwrap_err().to_string();
        assert!(message.contains("no range lines"), "{message}");
    }

    /// A readme in the shape of the one beside Psionic's zombie: a paragraph, a table of tabbed
    /// `FIRST-LAST Name` lines, credits with a year range, a repeated name.
    const README: &str = "Zombie model, free for any use.\n\
        Animated at 30 fps, the frames are:\n\
        \n\
        2-20\t\tWalk cycle 1\n\
        22-36\t\tWalk Cycle 2\n\
        59-75\t\tBlown away onto his back\n\
        137-169\t\tIdle 1\n\
        137-150\t\tIdle 1\n\
        \n\
        2003-2004 Psionic, free for any use\n\
        1- to be continued\n";

    #[test]
    fn finds_a_table_in_prose_or_in_comma_lines() {
        let ranges = table_in(README).expect("a table");
        let names: Vec<&str> = ranges.iter().map(|range| range.name.as_str()).collect();
        // The credits' year range is a range line too: it is dropped when the clips are cut, as
        // past the animation's end (`cut_table`).
        assert_eq!(names, ["Walk cycle 1", "Walk Cycle 2", "Blown away onto his back", "Idle 1", "Psionic, free for any use"]);
        assert_eq!(ranges[0], frames("Walk cycle 1", 2.0, 20.0));
        let comment = "2,20,walk\r\n22,36,walk2\r\n170,200,idle\r\nnot, a, table\r\n";
        let ranges = table_in(comment).expect("a table");
        assert_eq!(ranges, vec![frames("walk", 2.0, 20.0), frames("walk2", 22.0, 36.0), frames("idle", 170.0, 200.0)]);
        // One range in a paragraph is no table.
        assert_eq!(table_in("Frames 1-14 walk; the rest is yours."), None);
        assert_eq!(table_in(""), None);
    }

    #[test]
    fn a_table_cuts_what_fits_and_says_where_it_came_from() {
        let mut model = crate::model::Model::default();
        model.animations.push(crate::anim::Animation {
            name: "zombie".into(),
            duration: 200.0 / 30.0,
            frame_rate: Some(30.0),
            channels: Vec::new(),
            file_key_bytes: 0,
            source: None,
            weights: Vec::new(),
            compressed: None,
            motion: None,
        });
        model.clip_each_animation();
        let ranges = table_in(README).expect("a table");
        assert!(cut_table(&mut model, &ranges, "zombie.txt"));
        let names: Vec<&str> = model.clips.iter().map(|clip| clip.name.as_str()).collect();
        assert_eq!(names, ["Walk cycle 1", "Walk Cycle 2", "Blown away onto his back", "Idle 1", "zombie"]);
        assert!(
            model.stats.notes.iter().any(|note| note.starts_with("4 clips from the table in zombie.txt")),
            "{:?}",
            model.stats
        );
        assert!(
            model.stats.warnings.iter().any(|warning| warning.contains("\"Psionic, free for any use\"")),
            "{:?}",
            model.stats
        );
        // A table of which fewer than two fit cuts nothing.
        let mut short = crate::model::Model { animations: model.animations.clone(), ..Default::default() };
        short.clip_each_animation();
        assert!(!cut_table(&mut short, &[frames("a", 1.0, 5.0), frames("b", 300.0, 400.0)], "x.txt"));
        assert_eq!(short.clips.len(), 1);
    }

    #[test]
    fn reads_the_clips_argument() {
        let ranges = parse_clips_argument("walk=1-14, stealth walk = 15 - 30,wave=0.5s-1.25s").unwrap();
        let wave = ClipRange { name: "wave".to_string(), first: 0.5, last: 1.25, unit: RangeUnit::Seconds };
        assert_eq!(ranges, vec![frames("walk", 1.0, 14.0), frames("stealth walk", 15.0, 30.0), wave]);
    }

    #[test]
    fn bad_clips_items_are_named() {
        let cases = [
            ("walk=1-14,walk=3", "item 2 (\"walk=3\"): expected NAME=FIRST-LAST"),
            ("walk=1-14,", "item 2 (\"\"): empty item"),
            ("", "item 1 (\"\"): empty item"),
            ("walk", "found no '='"),
            ("=1-14", "no name"),
            ("walk=1-", "nothing after the dash"),
            ("walk=1-abc", "not a number"),
            ("walk=14-1", "runs backwards"),
            ("walk=1s-14", "mixes frames and seconds"),
            ("walk=1-14,walk=15-30", "item 2 (\"walk=15-30\"): name \"walk\" is already used by item 1"),
        ];
        for (text, expected) in cases {
            let message = parse_clips_argument(text).unwrap_err();
            assert!(message.contains(expected), "{text:?}: {message}");
        }
    }

    #[test]
    fn finds_the_ranges_file_beside_a_model() {
        let dir = std::env::temp_dir().join(format!("vkskin-ranges-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("robot animation ranges.txt")).unwrap();
        std::fs::write(dir.join("ninja animation ranges.txt"), "1-14 Walk\n").unwrap();
        let found = ranges_file_beside(&dir.join("ninja.ms3d"));
        let directory = ranges_file_beside(&dir.join("robot.ms3d"));
        let missing = ranges_file_beside(&dir.join("jeep1.ms3d"));
        let numbered = ranges_file_beside(&dir.join("Ninja2.ms3d"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, Some(dir.join("ninja animation ranges.txt")));
        assert_eq!(directory, None);
        assert_eq!(missing, None);
        assert_eq!(numbered, Some(dir.join("ninja animation ranges.txt")));
    }
}
