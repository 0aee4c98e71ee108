//! The viewer's panel: its controls, clicked and dragged through egui's own input (no window),
//! give the actions the viewer applies; and under Xvfb, the panel changes no pixel outside its
//! rectangle.

use egui::{Event, PointerButton, Pos2, RawInput, Rect};
use vkskin::anim::Layer;
use vkskin::app::panel::{Action, MorphRow, Panel, PanelInfo};
use vkskin::render::passes::debug::DebugViews;
use vkskin::render::stats::{PassTimings, VisibleCounts};
use vkskin::render::Strategy;

use crate::common::{run_validated, view_under_xvfb, xvfb_available};

/// An empty folder for one test's files.
fn fresh_folder(name: &str) -> std::path::PathBuf {
    crate::common::fresh_folder("panel", name)
}

/// The panel's rectangle as the viewer printed it ("panel: x0,y0 to x1,y1").
fn panel_rect(message: &str) -> [u32; 4] {
    let numbers: Vec<u32> = message
        .lines()
        .find_map(|line| line.strip_prefix("panel: "))
        .map(|rest| rest.split([',', ' ']).filter_map(|part| part.parse().ok()).collect())
        .unwrap_or_default();
    numbers.try_into().unwrap_or_else(|_| panic!("the viewer reports the panel's rectangle: {message}"))
}

/// A panel on an egui context of its own, as the viewer shows it, with a fixed snapshot.
struct Driver {
    context: egui::Context,
    panel: Panel,
    timings: PassTimings,
    labels: Vec<String>,
    /// The crowd's models and counts the snapshot shows (none: one model).
    crowd: Vec<(&'static str, usize)>,
    /// The morph targets the snapshot shows.
    morph_names: Vec<String>,
    /// Where the panel was drawn in the last frame.
    shown: Option<Rect>,
}

impl Driver {
    fn new() -> Driver {
        let timings = PassTimings { milliseconds: vec![("cull", 0.1), ("skin", 0.3), ("forward", 2.0), ("overlay", 0.5)] };
        Driver {
            context: egui::Context::default(),
            panel: Panel::new(true),
            timings,
            labels: Vec::new(),
            crowd: Vec::new(),
            morph_names: vec!["smile".to_string()],
            shown: None,
        }
    }

    /// One frame with these input events; the actions the panel returned.
    fn frame(&mut self, events: Vec<Event>) -> Vec<Action> {
        let info = PanelInfo {
            levels_building: false,
            device: "test device",
            driver: "test driver",
            resolution: (1280, 720),
            present_mode: "FIFO",
            model_name: "figure".to_string(),
            crowd: self.crowd.clone(),
            vertices: 3724,
            triangles: 6948,
            joints: 23,
            max_influences: 6,
            pool_vertices: None,
            levels: 8,
            light_culling: false,
            animation_lod: false,
            motion_blur: false,
            shadows: vkskin::render::Shadows::Map,
            raster: Some(vkskin::render::Raster::Auto),
            variety: true,
            root_motion: (true, true),
            instances: 16,
            max_instances: 4096,
            limiting: "the test's limit",
            strategy: Strategy::Compute,
            skinning: vkskin::anim::Skinning::Linear,
            clips: vec!["walk", "run"],
            clip: Some(0),
            joints_named: vec!["root", "hips", "spine", "head"],
            layer: None,
            clip_duration: 1.0,
            playing: "clip [0] \"walk\" at 0.25 of 1.00 s".to_string(),
            clock: 0.25,
            paused: true,
            speed: 1.0,
            fade: 0.3,
            debug: DebugViews::default(),
            timings: Some(&self.timings),
            visible: Some(VisibleCounts { skinned: 1, camera: 1, light: 1, ..VisibleCounts::default() }),
            renderdoc: false,
            error: None,
            morph_targets: self
                .morph_names
                .iter()
                .map(|name| MorphRow { name, weight: 0.25, range: (0.0, 1.0), set_by_hand: None })
                .collect(),
        };
        let input = RawInput {
            screen_rect: Some(Rect::from_min_size(Pos2::ZERO, egui::vec2(1280.0, 720.0))),
            events,
            ..Default::default()
        };
        let mut actions = Vec::new();
        let mut shown = None;
        let output = self.context.run(input, |context| (actions, shown) = self.panel.ui(context, &info));
        self.shown = shown;
        self.labels = output
            .shapes
            .iter()
            .filter_map(|clipped| match &clipped.shape {
                egui::Shape::Text(text) => Some(text.galley.text().to_string()),
                _ => None,
            })
            .collect();
        actions
    }

    fn rect(&self, label: &str) -> Rect {
        self.panel.control(label).unwrap_or_else(|| panic!("the panel has a control '{label}'"))
    }

    /// Presses at `from`, moves to `to` and releases there, over three frames; the actions.
    fn drag(&mut self, from: Pos2, to: Pos2) -> Vec<Action> {
        let button =
            |pos, pressed| Event::PointerButton { pos, button: PointerButton::Primary, pressed, modifiers: Default::default() };
        let mut actions = self.frame(vec![Event::PointerMoved(from), button(from, true)]);
        actions.extend(self.frame(vec![Event::PointerMoved(to)]));
        actions.extend(self.frame(vec![button(to, false)]));
        actions.extend(self.frame(vec![]));
        actions
    }

    fn click(&mut self, label: &str) -> Vec<Action> {
        let center = self.rect(label).center();
        self.drag(center, center)
    }
}

#[test]
fn the_panels_controls_give_the_actions_the_viewer_applies() {
    let mut driver = Driver::new();
    assert!(driver.frame(vec![]).is_empty(), "showing the panel changes nothing");
    assert!(driver.frame(vec![]).is_empty());
    let shown = driver.labels.join(" | ");
    assert!(shown.contains("forward 2.00 ms") && shown.contains("3724 vertices"), "{shown}");
    assert!(shown.contains("playing clip [0] \"walk\" at 0.25 of 1.00 s"), "the panel names the clip playing: {shown}");

    assert_eq!(driver.click("vertex"), vec![Action::Strategy(Strategy::Vertex)]);
    assert_eq!(driver.click("compute"), vec![], "the strategy in use is no change");
    assert_eq!(driver.click("dual quaternion"), vec![Action::Skinning(vkskin::anim::Skinning::DualQuaternion)]);
    assert_eq!(driver.click("linear"), vec![], "the mode in use is no change");
    assert_eq!(driver.click("skeleton"), vec![Action::Debug(DebugViews { skeleton: true, ..Default::default() })]);
    assert_eq!(driver.click("step"), vec![Action::Step], "step works while paused");
    assert_eq!(driver.click("pause"), vec![Action::Pause(false)]);
    assert_eq!(driver.click("animation LOD"), vec![Action::AnimationLod(true)]);
    assert_eq!(driver.click("motion blur"), vec![Action::MotionBlur(true)]);
    assert_eq!(driver.click("motion"), vec![Action::Debug(DebugViews { motion: true, ..Default::default() })]);
    assert_eq!(Action::parse("motion-blur=on"), Ok(Action::MotionBlur(true)));
    assert_eq!(driver.click("ray shadows"), vec![Action::Shadows(vkskin::render::Shadows::Ray)]);
    assert_eq!(driver.click("map shadows"), vec![], "the shadows in use are no change");
    assert_eq!(Action::parse("shadows=ray"), Ok(Action::Shadows(vkskin::render::Shadows::Ray)));
    assert!(Action::parse("shadows=soft").is_err());
    assert_eq!(driver.click("variety"), vec![Action::Variety(false)]);
    assert_eq!(Action::parse("variety=off"), Ok(Action::Variety(false)));

    // The clip picker: open it, pick the second clip.
    assert_eq!(driver.click("clip"), vec![]);
    assert_eq!(driver.click("clip run"), vec![Action::Clip(1)]);

    // A layer: the second clip over the upper body (the first joint named like a spine).
    assert_eq!(driver.click("layer"), vec![]);
    assert_eq!(driver.click("layer run"), vec![Action::Layer(Some(Layer { clip: 1, joint: 2, weight: 1.0 }))]);

    // The instance count: dragged along its logarithmic slider, applied once, on release.
    // The rail is the first `slider_width` points of the control (its value and label follow).
    let slider = driver.rect("instances");
    let rail = driver.context.style().spacing.slider_width;
    let from = slider.left_center() + egui::vec2(4.0, 0.0);
    let actions = driver.drag(from, slider.left_center() + egui::vec2(rail / 2.0, 0.0));
    let [Action::Instances(count)] = actions[..] else { panic!("one instance change on release: {actions:?}") };
    assert!((16..=256).contains(&count), "halfway along 1..4096 on a log scale: {count}");

    // A morph target's slider: dragged to its far end, the weight is held there by hand.
    let slider = driver.rect("morph smile");
    let actions =
        driver.drag(slider.left_center() + egui::vec2(rail / 4.0, 0.0), slider.left_center() + egui::vec2(rail + 20.0, 0.0));
    assert_eq!(actions.last(), Some(&Action::Morph(0, Some(1.0))), "{actions:?}");
    assert!(driver.labels.iter().any(|label| label.contains("morph targets (1)")), "{:?}", driver.labels);
}

/// A model with many morph targets (RobotExpressive's panel reached 806 pixels) and a crowd of three
/// models in a 720-pixel window: the panel stays inside the window, and what does not fit scrolls
/// into view (the last morph target's slider).
#[test]
fn a_tall_panel_fits_the_window_and_scrolls() {
    let mut driver = Driver::new();
    driver.crowd = vec![("Soldier", 5), ("stormtrooper", 5), ("ninja", 4)];
    driver.timings.milliseconds =
        ["cull", "palette", "skin", "triangles", "light", "shadow", "forward", "motion", "blur", "overlay"]
            .into_iter()
            .map(|pass| (pass, 0.5))
            .collect();
    driver.morph_names = (0..8).map(|target| format!("target {target}")).collect();
    driver.frame(vec![]);
    driver.frame(vec![]);
    let shown = driver.shown.expect("the panel is shown");
    println!("the panel: {shown:?}");
    assert!(shown.bottom() <= 720.0, "the panel runs off the window: {shown:?}");
    // Scrolled down over the panel, the last slider comes into the window.
    let last = "morph target 7";
    let hidden = driver.panel.control(last).is_none_or(|rect| rect.bottom() > 720.0);
    assert!(hidden, "the last slider is out of view before scrolling");
    let over = shown.center();
    for _ in 0..20 {
        driver.frame(vec![
            Event::PointerMoved(over),
            Event::MouseWheel {
                unit: egui::MouseWheelUnit::Point,
                delta: egui::vec2(0.0, -200.0),
                modifiers: Default::default(),
            },
        ]);
    }
    driver.frame(vec![]);
    let slider = driver.rect(last);
    assert!(slider.bottom() <= 720.0 && slider.top() >= 0.0, "{last} at {slider:?}");
}

/// Whether two pixels differ by more than 2 in a channel.
/// A crowd of several models: the panel lists each with its instances, and a model's button takes
/// it out; one model lists none.
#[test]
fn the_panel_lists_a_crowds_models_and_takes_one_out() {
    let mut driver = Driver::new();
    driver.frame(vec![]);
    assert!(!driver.labels.iter().any(|label| label.contains("instances") && label.contains(':')), "{:?}", driver.labels);
    driver.crowd = vec![("figure", 6), ("Fox", 5), ("CesiumMan", 5)];
    driver.frame(vec![]);
    driver.frame(vec![]);
    for listed in ["figure: 6 instances", "Fox: 5 instances", "CesiumMan: 5 instances"] {
        assert!(driver.labels.iter().any(|label| label == listed), "{listed} in {:?}", driver.labels);
    }
    assert_eq!(driver.click("remove Fox"), vec![Action::RemoveModel(1)]);
    assert_eq!(Action::parse("remove-model=2"), Ok(Action::RemoveModel(2)));
}

fn differs(a: &image::Rgba<u8>, b: &image::Rgba<u8>) -> bool {
    a.0.iter().zip(b.0).any(|(&p, q)| p.abs_diff(q) > 2)
}

/// Pixels that differ between two images of one size, and the box around them.
fn differences(a: &image::RgbaImage, b: &image::RgbaImage) -> (usize, Option<[u32; 4]>) {
    let mut count = 0;
    let mut bounds: Option<[u32; 4]> = None;
    for (x, y, pixel) in a.enumerate_pixels() {
        let other = b.get_pixel(x, y);
        if differs(pixel, other) {
            count += 1;
            bounds = Some(match bounds {
                None => [x, y, x + 1, y + 1],
                Some([x0, y0, x1, y1]) => [x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1)],
            });
        }
    }
    (count, bounds)
}

#[test]
fn the_panel_changes_only_the_pixels_inside_its_rectangle() {
    if !xvfb_available() {
        return;
    }
    let folder = fresh_folder("screenshots");
    let run = |name: &str, extra: &[&str]| {
        let screenshot = folder.join(name);
        let _ = std::fs::remove_file(&screenshot);
        let message =
            run_validated(view_under_xvfb().args(["--frames", "60", "--validate", "--screenshot"]).arg(&screenshot).args(extra));
        (image::open(&screenshot).expect("screenshot written").to_rgba8(), message)
    };
    // Hidden (F1) rather than --no-ui: a viewer with a panel keeps the character beside it,
    // shown or hidden.
    let (with_panel, message) = run("panel.png", &[]);
    let (without, plain) = run("no-panel.png", &["--drive", "0:panel=off"]);
    assert!(!plain.contains("panel:"), "{plain}");
    let [x0, y0, x1, y1] = panel_rect(&message);
    let (count, bounds) = differences(&with_panel, &without);
    println!("{count} pixels differ, within {bounds:?}; the panel is {x0},{y0} to {x1},{y1}");
    assert!(bounds.is_some(), "the panel is drawn");
    // Outside the panel the two runs draw the same scene. Where two triangles meet at one depth
    // (an arm against the trousers), which one shows depends on the order the triangle pass's
    // atomic counters listed them, which varies from run to run: a few such pixels are allowed.
    let outside = with_panel
        .enumerate_pixels()
        .filter(|&(x, y, pixel)| {
            let inside = x >= x0 && y >= y0 && x < x1 && y < y1;
            !inside && differs(pixel, without.get_pixel(x, y))
        })
        .count();
    assert!(outside <= 64, "{outside} pixels outside the panel changed");
    assert!(count > ((x1 - x0) * (y1 - y0) / 2) as usize, "most of the panel's pixels differ from the scene");
}

#[test]
fn the_viewer_applies_the_panels_controls_as_they_say() {
    if !xvfb_available() {
        return;
    }
    let folder = fresh_folder("drive");
    // Paused after the second frame (the first to play the compressed clips, which a worker made
    // while the first drew the keys), so every shot shows the same moment; each control then
    // changes what it says. A shot is the frame before the step of the same number.
    let steps = "2:pause;60:strategy=vertex;120:instances=9;180:fade=0;181:clip=1;240:debug=skeleton";
    let message = run_validated(
        view_under_xvfb()
            .args(["--frames", "300", "--size", "960x540", "--validate", "--drive", steps, "--screenshot"])
            .arg(folder.join("shot.png")),
    );
    assert!(message.contains("frame 240: Debug"), "{message}");
    let [_, _, panel_right, _] = panel_rect(&message);
    // The scene right of the panel.
    let shot = |name: &str| {
        let image = image::open(folder.join(name)).unwrap_or_else(|error| panic!("{name}: {error}")).to_rgba8();
        image::imageops::crop_imm(&image, panel_right, 0, image.width() - panel_right, image.height()).to_image()
    };
    let count =
        |image: &image::RgbaImage, test: &dyn Fn(&image::Rgba<u8>) -> bool| image.pixels().filter(|pixel| test(pixel)).count();
    let changed = |a: &image::RgbaImage, b: &image::RgbaImage, by: u8| {
        a.pixels().zip(b.pixels()).filter(|(p, q)| p.0.iter().zip(q.0).any(|(&x, y)| x.abs_diff(y) > by)).count()
    };
    let dark = |pixel: &image::Rgba<u8>| u32::from(pixel[0]) + u32::from(pixel[1]) + u32::from(pixel[2]) < 200;
    let yellow = |pixel: &image::Rgba<u8>| pixel[0] > 200 && pixel[1] > 100 && pixel[2] < 90;

    let (paused, compute, vertex, nine) = (shot("shot_2.png"), shot("shot_60.png"), shot("shot_120.png"), shot("shot_180.png"));
    let (clip_0, clip_1, skeleton) = (shot("shot_181.png"), shot("shot_240.png"), shot("shot.png"));
    let pixels = paused.width() as usize * paused.height() as usize;
    // Where two triangles meet at one depth, which one shows depends on the order the triangle
    // pass's atomic counters listed them (as in the test above): a few pixels may differ.
    let still = changed(&paused, &compute, 0);
    assert!(still <= 16, "paused: the same frame 59 frames later, but {still} pixels differ");
    let strategy = changed(&compute, &vertex, 8);
    assert!(strategy < pixels / 200, "the vertex strategy draws the compute strategy's image: {strategy} pixels differ");
    let (one, many) = (count(&vertex, &dark), count(&nine, &dark));
    // The camera stays where it was, framing the first figure at 75 % of the frame: the grid's
    // other eight show around it, in part.
    assert!(2 * many > 3 * one, "nine instances show more figure than one: {one} -> {many} dark pixels");
    let fade_only = changed(&nine, &clip_0, 0);
    assert!(fade_only <= 16, "the crossfade setting alone changes nothing on screen, but {fade_only} pixels differ");
    let pose = changed(&clip_0, &clip_1, 8);
    assert!(pose > pixels / 100, "the second clip poses the figures differently: {pose} pixels");
    let (before, after) = (count(&clip_1, &yellow), count(&skeleton, &yellow));
    assert!(after > before + 200, "the skeleton view draws yellow bones: {before} -> {after}");
    println!("strategy {strategy}, figures {one} -> {many}, pose {pose}, bones {before} -> {after} of {pixels} pixels");
}

#[test]
fn files_dropped_on_the_viewer_open_and_a_broken_one_keeps_the_model() {
    if !xvfb_available() {
        return;
    }
    let folder = fresh_folder("open");
    // The figure with its walk alone; its wave is dropped on it later.
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    for name in ["figure.md5mesh", "figure_walk.md5anim", "figure_body.png"] {
        std::fs::copy(assets.join(name), folder.join(name)).expect("copied");
    }
    std::fs::write(folder.join("broken.glb"), b"glTF\x02\0\0\0\x05\0\0\0").expect("written");
    let steps = format!(
        "10:open={};20:open={};30:clip=1;40:layer=0@1:0.5",
        folder.join("broken.glb").display(),
        assets.join("figure_wave.md5anim").display()
    );
    let run = |steps: &str| {
        run_validated(view_under_xvfb().arg(folder.join("figure.md5mesh")).args([
            "--frames",
            "50",
            "--size",
            "480x640",
            "--validate",
            "--drive",
            steps,
        ]))
    };
    let message = run(&steps);
    // The broken file: its one-line error in the panel, naming the file and the byte; the figure stays.
    let said = message.lines().find(|line| line.starts_with("the panel says:")).unwrap_or_else(|| panic!("{message}"));
    assert!(said.contains("broken.glb") && said.contains("byte 8"), "{said}");
    // The dropped .md5anim joined the figure as a second clip, which then played with a layer.
    assert!(message.contains("presented 50 frames of figure, 2 clips"), "{message}");
    assert_eq!(message.matches("the panel says:").count(), 1, "the later steps went through: {message}");

    // Another format replaces the model, when the shared models are there.
    let Some(gltf) = crate::common::shared_models("gltf") else { return };
    let cesium = gltf.join("CesiumMan/CesiumMan.glb");
    let message = run(&format!("10:open={}", cesium.display()));
    assert!(message.contains("presented 50 frames of CesiumMan, 1 clips"), "{message}");
    // A glTF of joints and clips without a mesh joins the model shown, matched by joint name.
    let simple = gltf.join("RiggedSimple/RiggedSimple.glb");
    let clips = crate::retarget::without_meshes(&simple, &folder.join("clips_only.glb"));
    let message = run(&format!("10:open={};20:open={}", simple.display(), clips.display()));
    assert!(message.contains("presented 50 frames of RiggedSimple, 2 clips"), "{message}");
    assert!(!message.contains("the panel says:"), "{message}");
}
