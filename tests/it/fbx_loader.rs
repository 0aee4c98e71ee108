//! FBX through ufbx (`src/formats/fbx.rs`), held to the authoring tools' own posed meshes: the
//! reference OBJs beside the Maya and 3ds Max exports in `../shared/models/fbx` are the meshes the
//! tools themselves evaluated at a frame, in the file's own units and axes.

use std::path::Path;

use glam::{Mat4, Vec3};
use vkskin::formats::fbx::matrix;
use vkskin::formats::load_model;
use vkskin::model::Model;

use crate::common::shared_models;

/// The `v` lines of an OBJ file.
pub(crate) fn obj_points(path: &Path) -> Vec<Vec3> {
    let text = std::fs::read_to_string(path).expect("reference OBJ");
    text.lines()
        .filter_map(|line| line.strip_prefix("v "))
        .map(|rest| {
            let numbers: Vec<f32> = rest.split_whitespace().map(|number| number.parse().expect("number")).collect();
            Vec3::new(numbers[0], numbers[1], numbers[2])
        })
        .collect()
}

/// What ufbx's conversion to Y-up metres does to the file's own coordinates (the scene root's
/// transform), for bringing the reference OBJs into the model's space.
pub(crate) fn conversion(path: &Path) -> Mat4 {
    let options =
        ufbx::LoadOpts { target_axes: ufbx::CoordinateAxes::right_handed_y_up(), target_unit_meters: 1.0, ..Default::default() };
    let scene = ufbx::load_file(path.to_str().expect("path"), options).expect("loads");
    matrix(&scene.root_node.node_to_world)
}

/// The model skinned on the CPU at `time` into its `clip`'s animation.
pub(crate) fn skinned(model: &Model, clip: &str, time: f32) -> Vec<Vec3> {
    let clip = model.clips.iter().find(|candidate| candidate.name == clip).expect("the clip");
    let mut palette = vec![Mat4::IDENTITY; model.skeleton.len()];
    model.palette_at(clip.animation, clip.start + time, &mut palette);
    model.vertices.iter().map(|vertex| model.skinned_position(vertex, Some(&palette))).collect()
}

/// The farthest any point of either set lies from the nearest point of the other.
pub(crate) fn set_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    let farthest = |from: &[Vec3], to: &[Vec3]| {
        from.iter().map(|p| to.iter().map(|q| p.distance(*q)).fold(f32::INFINITY, f32::min)).fold(0.0, f32::max)
    };
    farthest(a, b).max(farthest(b, a))
}

/// Each export's skinned vertices at the reference frames equal the tool's posed mesh within
/// 1e-4 of the model's extent (the OBJs' vertex order is not the file's, so as point sets).
#[test]
fn skinned_vertices_match_the_authoring_tools_posed_meshes() {
    let Some(folder) = shared_models("fbx") else { return };
    // (file, clip, seconds into the clip, reference): the sausage's stacks share one 24 fps timeline
    // (wiggle from frame 1, spin from 20, deform from 40); the Max take runs at 30 fps from 0.
    let sausage = "MayaSausage/maya_game_sausage_7500_binary_combined.fbx";
    let cases = [
        (sausage, "wiggle", 9.0 / 24.0, "MayaSausage/reference/maya_game_sausage_wiggle_10.obj"),
        (sausage, "wiggle", 17.0 / 24.0, "MayaSausage/reference/maya_game_sausage_wiggle_18.obj"),
        (sausage, "spin", 7.0 / 24.0, "MayaSausage/reference/maya_game_sausage_spin_7.obj"),
        (sausage, "spin", 15.0 / 24.0, "MayaSausage/reference/maya_game_sausage_spin_15.obj"),
        (sausage, "deform", 8.0 / 24.0, "MayaSausage/reference/maya_game_sausage_deform_8.obj"),
        (sausage, "deform", 15.0 / 24.0, "MayaSausage/reference/maya_game_sausage_deform_15.obj"),
        ("MaxSkin/max_transformed_skin_7500_binary.fbx", "Take 001", 5.0 / 30.0, "MaxSkin/reference/max_transformed_skin_5.obj"),
        (
            "MaxSkin/max_transformed_skin_7500_binary.fbx",
            "Take 001",
            15.0 / 30.0,
            "MaxSkin/reference/max_transformed_skin_15.obj",
        ),
    ];
    for (file, clip, time, reference) in cases {
        let path = folder.join(file);
        let model = load_model(&path, &[]).expect("loads");
        let to_model = conversion(&path);
        let expected: Vec<Vec3> = obj_points(&folder.join(reference)).iter().map(|p| to_model.transform_point3(*p)).collect();
        let distance = set_distance(&skinned(&model, clip, time), &expected);
        let extent = model.extent();
        println!("{file} {clip} at {time:.4} s: {distance:e} from {reference} (extent {extent})");
        assert!(distance <= 1e-4 * extent, "{file} {clip} at {time} s: {distance} from {reference}, extent {extent}");
    }
}

/// Broken FBX files give one error naming the file, never a panic or an abort: cut short, bytes
/// after the magic that mean nothing, an empty file named .fbx.
#[test]
fn broken_files_are_errors_that_name_the_file() {
    let folder = crate::common::scratch_in("fbx", "");
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty.fbx", Vec::new()),
        ("garbage.fbx", b"Kaydara FBX Binary  \x00\x1a\x00\xe8\x1c\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff".to_vec()),
        ("text.fbx", b"; FBX 7.5.0 project file\nFBXHeaderExtension: {\n  FBXVersion: 7500\n  Objects: {{{{".to_vec()),
    ];
    if let Some(models) = shared_models("fbx") {
        let real = std::fs::read(models.join("QuaterniusMan/Male_Casual.fbx")).expect("file");
        cases.push(("cut.fbx", real[..real.len() / 3].to_vec()));
    }
    for (name, bytes) in cases {
        let path = folder.join(name);
        std::fs::write(&path, &bytes).expect("written");
        match load_model(&path, &[]) {
            Err(error) => {
                let message = error.to_string();
                assert!(message.contains(name), "{name}: {message}");
                println!("{name}: {message}");
            }
            Ok(model) => panic!("{name} loaded as {} vertices", model.vertices.len()),
        }
    }
}

/// 300 mutants of a real binary file (bytes overwritten, runs cut out, the tail cut off, from a
/// fixed seed): each loads or fails with an error, never a panic, each within a second.
#[test]
fn mutated_files_load_or_fail_cleanly() {
    let Some(models) = shared_models("fbx") else { return };
    let original = std::fs::read(models.join("MayaSausage/maya_game_sausage_7500_binary_combined.fbx")).expect("file");
    let path = Path::new("/nonexistent/mutant.fbx");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound.max(1) as u64) as usize
    };
    let (mut loaded, mut refused) = (0, 0);
    for mutant in 0..300 {
        let mut bytes = original.clone();
        match mutant % 3 {
            0 => {
                for _ in 0..1 + next(8) {
                    let at = next(bytes.len());
                    bytes[at] = next(256) as u8;
                }
            }
            1 => {
                let at = next(bytes.len());
                let length = next(64).min(bytes.len() - at);
                bytes.drain(at..at + length);
            }
            _ => bytes.truncate(next(bytes.len())),
        }
        let started = std::time::Instant::now();
        match vkskin::formats::fbx::from_bytes(&bytes, path) {
            Ok(model) => {
                loaded += 1;
                let _ = model.cell_bounds();
            }
            Err(error) => {
                refused += 1;
                assert!(error.to_string().contains("mutant.fbx"), "{error}");
            }
        }
        assert!(started.elapsed().as_secs_f64() < 1.0, "mutant {mutant} took {:?}", started.elapsed());
    }
    println!("{loaded} mutants loaded, {refused} refused");
}

/// The baked keys follow ufbx's own evaluation of the file's curves at any time, not only at
/// frames: every clip of every shared FBX file at 7 times between its keys, skinned on the CPU,
/// against `ufbx::evaluate_scene` with skinning, within 1e-4 of the extent (as point sets).
#[test]
fn baked_clips_follow_ufbx_evaluation_between_frames() {
    let Some(folder) = shared_models("fbx") else { return };
    let files = [
        "QuaterniusMan/Male_Casual.fbx",
        "QuaterniusRobot/Robot.fbx",
        "AssimpArmature/animation_with_skeleton.fbx",
        "MayaSausage/maya_game_sausage_7500_binary_combined.fbx",
        "MaxSkin/max_transformed_skin_7500_binary.fbx",
    ];
    for file in files {
        let path = folder.join(file);
        let model = load_model(&path, &[]).expect("loads");
        let options = ufbx::LoadOpts {
            target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
            target_unit_meters: 1.0,
            inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
            ..Default::default()
        };
        let scene = ufbx::load_file(path.to_str().expect("path"), options).expect("loads");
        let extent = model.extent();
        let mut worst = 0.0f32;
        for (clip, stack) in model.clips.iter().zip(scene.anim_stacks.iter()) {
            for fraction in [0.03, 0.17, 0.29, 0.43, 0.61, 0.77, 0.93] {
                let time = clip.duration * fraction;
                let evaluate = ufbx::EvaluateOpts { evaluate_skinning: true, ..Default::default() };
                let posed =
                    ufbx::evaluate_scene(&scene, &stack.anim, stack.time_begin + f64::from(time), evaluate).expect("evaluates");
                let mut expected = Vec::new();
                for mesh in posed.meshes.iter() {
                    let Some(node) = mesh.element.instances.iter().next() else { continue };
                    let to_world = matrix(&node.geometry_to_world);
                    for p in mesh.skinned_position.values.iter() {
                        let p = Vec3::new(p.x as f32, p.y as f32, p.z as f32);
                        expected.push(if mesh.skinned_is_local { to_world.transform_point3(p) } else { p });
                    }
                }
                let distance = set_distance(&skinned(&model, &clip.name, time), &expected);
                worst = worst.max(distance);
                assert!(distance <= 1e-4 * extent, "{file} {} at {time} s: {distance}, extent {extent}", clip.name);
            }
        }
        println!("{file}: worst {worst:e} (extent {extent}) over {} clips", model.clips.len());
    }
}

/// The sausage's ASCII file with a diffuse texture added to its material, as Maya writes one: a
/// `Texture` naming the artist's absolute Windows path and a relative one. With the image beside
/// the file, it is found by name; with a `Video` whose `Content` embeds the image, that is used
/// (no file needed); with neither, one warning names what was tried and the model still loads.
#[test]
fn diffuse_textures_come_embedded_or_from_beside_the_file() {
    let Some(models) = shared_models("fbx/MayaSausage") else { return };
    let text = std::fs::read_to_string(models.join("maya_game_sausage_7500_ascii_combined.fbx")).expect("ASCII FBX");
    let mut png = Vec::new();
    image::RgbaImage::from_pixel(4, 2, image::Rgba([200, 30, 30, 255]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("PNG");
    let texture = "\tTexture: 7000000001, \"Texture::skin\", \"\" {\n\t\tType: \"TextureVideoClip\"\n\t\t\
                   FileName: \"C:\\\\Users\\\\artist\\\\textures\\\\skin.png\"\n\t\tRelativeFilename: \"..\\\\textures\\\\skin.png\"\n\t}\n";
    use base64::Engine as _;
    let video = format!(
        "\tVideo: 7000000002, \"Video::skin\", \"Clip\" {{\n\t\tType: \"Clip\"\n\t\tFileName: \"C:\\\\nowhere\\\\embedded.png\"\n\t\t\
         RelativeFilename: \"embedded.png\"\n\t\tContent: , \"{}\"\n\t}}\n",
        base64::engine::general_purpose::STANDARD.encode(&png)
    );
    let material = "\tDeformer: 2516901321520,";
    let connect = "Connections:  {\n\tC: \"OP\",7000000001,2520702825376, \"DiffuseColor\"\n";
    let with = |objects: &str, connections: &str| {
        text.replacen(material, &format!("{objects}{material}"), 1).replacen("Connections:  {\n", connections, 1)
    };
    let folder = crate::common::scratch_in("fbx-textures", "");
    let beside = folder.join("beside");
    let _ = std::fs::remove_dir_all(&beside);
    std::fs::create_dir_all(&beside).expect("folder");
    std::fs::write(beside.join("skin.png"), &png).expect("PNG written");
    std::fs::write(beside.join("sausage.fbx"), with(texture, connect)).expect("FBX written");
    let model = load_model(&beside.join("sausage.fbx"), &[]).expect("loads");
    let found = model.materials[0].texture.as_ref().expect("the texture beside the file");
    assert_eq!((found.width, found.height, found.path.clone()), (4, 2, beside.join("skin.png")));
    assert_eq!(model.materials[0].base_color, glam::Vec4::ONE);

    let embedded = folder.join("embedded.fbx");
    let both = format!("{texture}{video}");
    std::fs::write(&embedded, with(&both, &format!("{connect}\tC: \"OO\",7000000002,7000000001\n"))).expect("FBX written");
    let model = load_model(&embedded, &[]).expect("loads");
    let found = model.materials[0].texture.as_ref().expect("the embedded texture");
    assert_eq!((found.width, found.height), (4, 2));
    assert_eq!(found.encoded.as_ref(), png.as_slice());

    let missing = folder.join("missing.fbx");
    std::fs::write(&missing, with(texture, connect)).expect("FBX written");
    let model = load_model(&missing, &[]).expect("loads without its texture");
    assert!(model.materials[0].texture.is_none());
    let warning = model.stats.warnings.iter().find(|warning| warning.contains("skin.png")).expect("a warning");
    assert!(warning.contains("not found; tried"), "{warning}");
}

/// Blender's cube with two animated blend shapes (Key, Side; DeformPercent as a field; 100 units
/// a metre): its morph targets at the weights its clip gives at frames 5, 15 and 25 put the
/// vertices where Blender's own posed OBJs have them, within 1e-4 of the extent (the CPU
/// reference the skin pass is held to in `tests/it/morph.rs`).
#[test]
fn blend_shapes_read_as_morph_targets_pose_like_blender() {
    let Some(folder) = shared_models("fbx/BlenderShapeAnim") else { return };
    let path = folder.join("blender440_shape_weight_anim_7400_binary.fbx");
    let model = load_model(&path, &[]).expect("loads");
    let names: Vec<&str> = model.morph_targets.iter().map(|target| target.name.as_str()).collect();
    assert_eq!(names, ["Key", "Side"]);
    assert!(model
        .morph_targets
        .iter()
        .all(|target| !target.vertices.is_empty() && target.vertices.len() <= model.vertices.len()));
    assert_eq!(model.animations[0].weights.len(), 2, "both weights animated");
    let to_model = conversion(&path);
    let extent = model.extent();
    let mut changed = false;
    for frame in [5, 15, 25] {
        let time = frame as f32 / 24.0;
        let weights = model.morph_weights(0, time);
        changed |= weights.iter().any(|&weight| weight > 0.01);
        let reference = folder.join(format!("reference/blender440_shape_weight_anim_{frame}.obj"));
        let expected: Vec<Vec3> = obj_points(&reference).iter().map(|p| to_model.transform_point3(*p)).collect();
        let distance = set_distance(&model.morphed_positions(&weights), &expected);
        println!("frame {frame}: weights {weights:?}, {distance:e} from Blender's mesh (extent {extent})");
        assert!(distance <= 1e-4 * extent, "frame {frame}: {distance} against extent {extent}");
    }
    assert!(changed, "the clip moves the weights");
}
