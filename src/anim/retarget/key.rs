//! A joint's name as names are compared across files: the one normalisation that name matching
//! (`names.rs`) and humanoid roles (`humanoid.rs`) both read.

/// A joint name as compared: the part after the last namespace separator (`mixamorig:`,
/// `Armature|`), without a `Character1_` or `mixamorig_` prefix, lower case, without spaces,
/// underscores, hyphens and dots.
pub fn joint_key(name: &str) -> String {
    let last = name.rsplit([':', '|']).next().unwrap_or(name);
    let lower = last.to_lowercase();
    let mut rest = lower.as_str();
    for prefix in ["mixamorig", "character"] {
        if let Some(after) = rest.strip_prefix(prefix) {
            let after = after.trim_start_matches(|c: char| c.is_ascii_digit());
            if let Some(after) = after.strip_prefix(['_', ' ']).filter(|after| !after.is_empty()) {
                rest = after;
            }
        }
    }
    rest.chars().filter(|c| !matches!(c, ' ' | '_' | '-' | '.')).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_across_namespaces_and_case() {
        assert_eq!(joint_key("mixamorig:LeftArm"), "leftarm");
        assert_eq!(joint_key("mixamorig1:LeftArm"), "leftarm");
        assert_eq!(joint_key("mixamorig_LeftArm"), "leftarm");
        assert_eq!(joint_key("Armature|Left_Arm"), "leftarm");
        assert_eq!(joint_key("Character1_LeftArm"), "leftarm");
        assert_eq!(joint_key("left arm"), "leftarm");
        assert_eq!(joint_key("Character"), "character", "a prefix alone is the name");
        assert_ne!(joint_key("LeftArm"), joint_key("RightArm"));
    }
}
