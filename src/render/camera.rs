//! An orbit camera around a target point, and Vulkan's projection conventions.

use glam::{Mat4, Vec3};

use crate::anim::Aabb;

/// The turn (radians) [`OrbitCamera::framing`] looks from, from straight in front (+Z): a little to
/// the left of a character facing the camera.
pub const FRAMING_YAW: f32 = 0.45;

/// The share of the frame [`OrbitCamera::framing`] gives the framed box.
pub const FRAME_FILL: f32 = 0.75;
/// The frame shape it frames for: the viewer's and `render`'s default 1280×720.
pub const FRAMING_ASPECT: f32 = 16.0 / 9.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    /// Radians around +Y; 0 looks from +Z towards -Z.
    pub yaw: f32,
    /// Radians above the horizon.
    pub pitch: f32,
    pub fov_y: f32,
    /// The share of the frame's width, on the left, that the image leaves free: the viewer draws
    /// the scene beside its panel, not under it, as a viewport the width of what is left. 0
    /// elsewhere.
    pub inset: f32,
}

impl OrbitCamera {
    /// Frames `bounds` from the front, slightly above and to the side, so that its box covers
    /// [`FRAME_FILL`] of a 16:9 frame's height or width, whichever it reaches first (a standing
    /// figure its height, a car its width). Never from inside the box's sphere.
    pub fn framing(bounds: Aabb) -> OrbitCamera {
        OrbitCamera::framing_points(&bounds.corners())
    }

    /// [`OrbitCamera::framing`] for the box of `points`, with what the frame shows measured on the
    /// points themselves (a fox's outline, not its box's corners).
    pub fn framing_points(points: &[Vec3]) -> OrbitCamera {
        Self::framing_points_from(points, FRAMING_YAW)
    }

    /// [`OrbitCamera::framing_points`] from the side at `yaw` (0: on +Z, looking towards -Z).
    pub fn framing_points_from(points: &[Vec3], yaw: f32) -> OrbitCamera {
        let bounds = Aabb::from_points(points.iter().copied());
        let radius = bounds.size().length() * 0.5;
        let fov_y = 45f32.to_radians();
        let mut camera =
            OrbitCamera { target: bounds.center(), distance: radius / (fov_y * 0.5).sin(), yaw, pitch: 0.25, fov_y, inset: 0.0 };
        if !(radius > 0.0 && radius.is_finite()) {
            camera.distance = 1.0;
            return camera;
        }
        // The box's share of the frame goes about as the inverse of the distance, and the points'
        // middle on screen as the target's shift across and up: a few steps settle both (the nearer
        // side of a crowd looks wider, so the box's centre is not the picture's).
        for _ in 0..4 {
            let fill = camera.fill(points, FRAMING_ASPECT);
            if !(fill > 0.0 && fill.is_finite()) {
                break;
            }
            camera.distance = (camera.distance * fill / FRAME_FILL).max(radius * 1.1);
            let middle = camera.screen_middle(points, FRAMING_ASPECT);
            let half_height = camera.distance * (camera.fov_y * 0.5).tan();
            let eye = camera.view().inverse();
            let (right, up) = (eye.x_axis.truncate(), eye.y_axis.truncate());
            // Clip space's +y points down the screen.
            if middle.is_finite() {
                camera.target += right * middle.x * half_height * FRAMING_ASPECT - up * middle.y * half_height;
            }
        }
        camera
    }

    /// The larger of the shares of the frame's width and height that `points` span once projected
    /// (1: edge to edge).
    pub fn fill(&self, points: &[Vec3], aspect: f32) -> f32 {
        let view_projection = self.view_projection(aspect);
        let (mut low, mut high) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        for point in points {
            let projected = view_projection.project_point3(*point);
            (low, high) = (low.min(projected), high.max(projected));
        }
        ((high.x - low.x) * 0.5).max((high.y - low.y) * 0.5)
    }

    /// The middle of `points`' span on screen (x: -1 the left edge, 1 the right; y: -1 the top,
    /// 1 the bottom).
    fn screen_middle(&self, points: &[Vec3], aspect: f32) -> glam::Vec2 {
        let view_projection = self.view_projection(aspect);
        let (low, high) = points
            .iter()
            .map(|point| view_projection.project_point3(*point).truncate())
            .fold((glam::Vec2::INFINITY, glam::Vec2::NEG_INFINITY), |(low, high), point| (low.min(point), high.max(point)));
        (low + high) * 0.5
    }

    pub fn position(&self) -> Vec3 {
        let (sin_yaw, cos_yaw) = self.yaw.sin_cos();
        let (sin_pitch, cos_pitch) = self.pitch.sin_cos();
        self.target + self.distance * Vec3::new(sin_yaw * cos_pitch, sin_pitch, cos_yaw * cos_pitch)
    }

    pub fn view(&self) -> Mat4 {
        glam::camera::rh::view::look_at_mat4(self.position(), self.target, Vec3::Y)
    }

    /// Perspective in Vulkan's conventions: depth 0..1 and clip-space +y pointing down.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let near = (self.distance * 0.01).max(1e-3);
        let far = self.distance * 20.0 + 10.0;
        glam::camera::rh::proj::vulkan::perspective(self.fov_y, aspect.max(1e-3), near, far)
    }

    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        // In clip space, the image scaled into the right (1 - inset) of the frame: x from [-1, 1]
        // to [2·inset - 1, 1], y by the same scale (the aspect kept).
        let scale = 1.0 - self.inset;
        let into = Mat4::from_translation(Vec3::new(self.inset, 0.0, 0.0)) * Mat4::from_scale(Vec3::new(scale, scale, 1.0));
        into * self.projection(aspect) * self.view()
    }

    /// Mouse drag in pixels: yaw and pitch, pitch kept off the poles.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-1.45, 1.45);
    }

    /// Wheel steps: positive zooms in.
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.9f32.powf(steps)).clamp(0.05, 1e4);
    }
}
