//! The crowd frame's view from Godot: the culling camera's frustum, position and projection, and
//! the shadowed lights (directional, omni, spot), all in the crowd node's space; and the frame settings from
//! the nodes' properties.

use godot::classes::camera_3d::{KeepAspect, ProjectionType};
use godot::classes::light_3d::Param;
use godot::classes::{Camera3D, DirectionalLight3D, EditorInterface, Engine, Node3D};
use godot::prelude::*;
use vat_core::crowd::{FrameSettings, Plane as CorePlane, Projection, View};
use vat_core::lod_distance::screen_constant;

use crate::convert;

/// The camera a crowd culls against: `path` when set (relative to the node), else in the editor
/// the first 3D editor viewport's camera (what the user looks through), else the node's
/// viewport's current camera. `Err` names a `path` that is not a Camera3D.
pub fn culling_camera(node: &Gd<Node3D>, path: &NodePath) -> Result<Option<Gd<Camera3D>>, String> {
    if !path.is_empty() {
        let found = node.get_node_or_null(path);
        return match found.map(|n| n.try_cast::<Camera3D>()) {
            Some(Ok(camera)) => Ok(Some(camera)),
            Some(Err(other)) => Err(format!(
                "culling_camera '{path}' is a {}, not a Camera3D; nothing is culled",
                other.get_class()
            )),
            None => Err(format!(
                "culling_camera '{path}' does not name a node; nothing is culled"
            )),
        };
    }
    let camera = if Engine::singleton().is_editor_hint() {
        EditorInterface::singleton()
            .get_editor_viewport_3d()
            .and_then(|v| v.get_camera_3d())
    } else {
        node.get_viewport().and_then(|v| v.get_camera_3d())
    };
    Ok(camera)
}

/// `camera`'s view in `node`'s space, with a shadow sweep per visible DirectionalLight3D that
/// casts shadows and a shadow sphere per such OmniLight3D or SpotLight3D (when `shadows`).
pub fn view_of(node: &Gd<Node3D>, camera: &Gd<Camera3D>, shadows: bool) -> View {
    let to_node = node.get_global_transform().affine_inverse();
    let basis = to_node.basis;
    let linear = glam::Mat3::from_cols(
        convert::vec3(basis.col_a()),
        convert::vec3(basis.col_b()),
        convert::vec3(basis.col_c()),
    );
    // A plane n.x > d in global space is (A^-T n).y > d + n.(A^-T... ): with x = G y, where G is
    // the node's global transform (the inverse of `to_node`), n.(B y + o) > d.
    let global = node.get_global_transform();
    let g = glam::Mat3::from_cols(
        convert::vec3(global.basis.col_a()),
        convert::vec3(global.basis.col_b()),
        convert::vec3(global.basis.col_c()),
    );
    let origin = convert::vec3(global.origin);
    let planes = camera
        .get_frustum()
        .iter_shared()
        .map(|p| {
            let n = convert::vec3(p.normal);
            CorePlane {
                normal: g.transpose() * n,
                d: p.d - n.dot(origin),
            }
        })
        .collect();
    let position = convert::vec3(to_node * camera.get_global_position());
    // Sizes in the node's space: a node scaled by k sees everything 1/k as large.
    let node_scale = g.determinant().abs().cbrt().max(f32::MIN_POSITIVE);
    let aspect = camera
        .get_viewport()
        .map(|v| v.get_visible_rect().size)
        .filter(|s| s.x > 0.0 && s.y > 0.0)
        .map_or(1.0, |s| s.y / s.x);
    let keep_width = camera.get_keep_aspect_mode() == KeepAspect::WIDTH;
    let projection = if camera.get_projection() == ProjectionType::ORTHOGONAL {
        let size = camera.get_size() * if keep_width { aspect } else { 1.0 };
        Projection::Orthographic {
            height: size / node_scale,
        }
    } else {
        let mut half = (camera.get_fov().to_radians() * 0.5).tan();
        if keep_width {
            half *= aspect;
        }
        Projection::Perspective {
            screen_constant: screen_constant(2.0 * half.atan()),
        }
    };
    // How far from the camera the farthest point of the view within depth `max_distance` lies
    // (a directional light's shadow maps cover the view up to that depth).
    let reach_of = |max_distance: f32| -> f32 {
        if camera.get_projection() == ProjectionType::ORTHOGONAL {
            let half_h = 0.5 * camera.get_size() * if keep_width { aspect } else { 1.0 };
            let half_w = half_h / aspect;
            (max_distance * max_distance + half_h * half_h + half_w * half_w).sqrt()
        } else {
            let mut tan_v = (camera.get_fov().to_radians() * 0.5).tan();
            if keep_width {
                tan_v *= aspect;
            }
            let tan_h = tan_v / aspect;
            max_distance * (1.0 + tan_v * tan_v + tan_h * tan_h).sqrt()
        }
    };
    let mut shadow_sweeps = Vec::new();
    let mut shadow_reach = Vec::new();
    let mut shadow_spheres = Vec::new();
    if shadows {
        if let Some(viewport) = node.get_viewport() {
            for light in super::lights::lights(&viewport.upcast()) {
                if !light.is_instance_valid() || !light.is_visible_in_tree() || !light.has_shadow()
                {
                    continue;
                }
                match light.clone().try_cast::<DirectionalLight3D>() {
                    Ok(sun) => {
                        let travel = -convert::vec3(sun.get_global_basis().col_c());
                        let distance = sun.get_param(Param::SHADOW_MAX_DISTANCE);
                        let sweep = linear * travel.normalize_or_zero();
                        shadow_sweeps.push(sweep * distance);
                        // In the node's space, as the sweep.
                        shadow_reach.push(reach_of(distance) * sweep.length());
                    }
                    // Omni and spot lights: the sphere of their range (a spot light's cone lies
                    // inside it), in the node's space.
                    Err(local) => {
                        let centre = convert::vec3(to_node * local.get_global_position());
                        let range = local.get_param(Param::RANGE) / node_scale;
                        shadow_spheres.push((centre, range));
                    }
                }
            }
        }
    }
    View {
        planes,
        camera: position,
        projection,
        shadow_sweeps,
        shadow_spheres,
        shadow_reach,
    }
}

/// The crowd nodes' LOD and culling properties, as both nodes export them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameProps {
    /// `culling`.
    pub culling: bool,
    /// `lod_bias`.
    pub lod_bias: f32,
    /// `max_lod` (-1: none).
    pub max_lod: i32,
    /// `force_lod` (-1: off).
    pub force_lod: i32,
    /// `shadow_lod` (-1: off).
    pub shadow_lod: i32,
    /// `lod_debug_colors`.
    pub debug_colors: bool,
    /// `lod_interpolate`: keep frame interpolation beyond LOD1.
    pub interpolate_far: bool,
}

impl Default for FrameProps {
    fn default() -> Self {
        Self {
            culling: true,
            lod_bias: 0.0,
            max_lod: -1,
            force_lod: -1,
            shadow_lod: -1,
            debug_colors: false,
            interpolate_far: false,
        }
    }
}

impl FrameProps {
    /// The core's settings for a crowd that casts shadows when `cast_shadows`.
    pub fn settings(&self, cast_shadows: bool, billboard: bool, time: f32) -> FrameSettings {
        let level = |v: i32| u8::try_from(v.clamp(0, 255)).unwrap_or(u8::MAX);
        FrameSettings {
            culling: self.culling,
            lod_bias: self.lod_bias,
            max_lod: if self.max_lod < 0 {
                u8::MAX
            } else {
                level(self.max_lod)
            },
            force_lod: (self.force_lod >= 0).then(|| level(self.force_lod)),
            shadow_lod: (self.shadow_lod >= 0).then(|| level(self.shadow_lod)),
            cast_shadows,
            any_yaw: billboard,
            time,
        }
    }
}

/// Checks a level property (`max_lod`, `force_lod`, `shadow_lod`): -1 (off) or a level.
pub fn check_level(node: &str, what: &str, value: i32, keeps: i32) -> bool {
    if value < -1 {
        godot_error!(
            "vat_crowd: {node}.{what}: {value} is not a level (-1 turns it off, 0 and up name a \
             level); it stays {keeps}"
        );
        return false;
    }
    true
}

/// Checks `lod_bias`: finite.
pub fn check_bias(node: &str, value: f64, keeps: f32) -> bool {
    if !value.is_finite() || value.abs() > 1e6 {
        godot_error!(
            "vat_crowd: {node}.lod_bias: {value} is not a finite number of levels; it stays {keeps}"
        );
        return false;
    }
    true
}
