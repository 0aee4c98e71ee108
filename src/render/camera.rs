//! An orbit camera around a target point, and Vulkan's projection conventions.

use glam::{Mat4, Vec3};

use crate::anim::Aabb;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    /// Radians around +Y; 0 looks from +Z towards -Z.
    pub yaw: f32,
    /// Radians above the horizon.
    pub pitch: f32,
    pub fov_y: f32,
}

impl OrbitCamera {
    /// Frames `bounds` from the front, slightly above and to the side.
    pub fn framing(bounds: Aabb) -> OrbitCamera {
        let radius = bounds.size().length() * 0.5;
        let fov_y = 45f32.to_radians();
        OrbitCamera { target: bounds.center(), distance: radius / (fov_y * 0.5).sin() * 1.3, yaw: 0.45, pitch: 0.25, fov_y }
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
        self.projection(aspect) * self.view()
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
