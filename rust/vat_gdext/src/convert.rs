//! The one place where Godot math types and glam types meet.

use godot::builtin::{Aabb, AnyArray, Array, Basis, Transform3D, Variant, Vector2, Vector3};
use godot::classes::Object;
use godot::obj::{Gd, Inherits};
use vat_core::bounds::Bounds;

/// Godot vector to glam.
pub fn vec3(v: Vector3) -> glam::Vec3 {
    glam::Vec3::new(v.x, v.y, v.z)
}

/// glam vector to Godot.
pub fn to_vector3(v: glam::Vec3) -> Vector3 {
    Vector3::new(v.x, v.y, v.z)
}

/// glam 2D vector to Godot.
#[allow(dead_code)]
pub fn to_vector2(v: glam::Vec2) -> Vector2 {
    Vector2::new(v.x, v.y)
}

/// Godot transform (basis columns + origin) to a glam affine transform.
pub fn affine(t: Transform3D) -> glam::Affine3A {
    let b: Basis = t.basis;
    glam::Affine3A::from_cols(
        vec3(b.col_a()).into(),
        vec3(b.col_b()).into(),
        vec3(b.col_c()).into(),
        vec3(t.origin).into(),
    )
}

/// Core bounds to a Godot AABB (an empty bounds becomes a zero-size AABB at the origin).
pub fn to_aabb(b: &Bounds) -> Aabb {
    if b.is_empty() {
        return Aabb::new(Vector3::ZERO, Vector3::ZERO);
    }
    Aabb::new(to_vector3(b.min), to_vector3(b.max - b.min))
}

/// A Godot AABB to core bounds.
pub fn bounds(a: Aabb) -> Bounds {
    Bounds {
        min: vec3(a.position),
        max: vec3(a.position + a.size),
    }
}

/// A transform from 12 floats in `MultiMesh.buffer`'s 3D layout (the 3x4 matrix row by row).
/// Panics unless `rows.len() == 12`.
pub fn transform_from_rows(rows: &[f32]) -> Transform3D {
    let ([x, y, z], origin) =
        vat_core::crowd::transform_from_rows(rows.try_into().expect("12 floats"));
    Transform3D::new(
        Basis::from_cols(to_vector3(x), to_vector3(y), to_vector3(z)),
        to_vector3(origin),
    )
}

/// Copies a Godot vector array into glam vectors.
pub fn vec3s(a: &godot::builtin::PackedVector3Array) -> Vec<glam::Vec3> {
    a.as_slice().iter().map(|v| vec3(*v)).collect()
}

/// Copies glam vectors into a Godot vector array.
pub fn to_vector3s(v: &[glam::Vec3]) -> godot::builtin::PackedVector3Array {
    v.iter().map(|p| to_vector3(*p)).collect()
}

/// Extracts yaw (rotation about +Y), uniform scale and position from a Godot transform, the
/// parts an actor record stores. Returns `None` when the transform is not finite.
pub fn actor_pose(t: Transform3D) -> Option<(glam::Vec3, f32, f32)> {
    let a = affine(t);
    let pos = glam::Vec3::from(a.translation);
    let x = glam::Vec3::from(a.matrix3.x_axis);
    let scale = x.length();
    let yaw = (-x.z).atan2(x.x);
    if pos.is_finite() && scale.is_finite() && yaw.is_finite() && a.matrix3.is_finite() {
        Some((pos, yaw, scale))
    } else {
        None
    }
}

/// The basis columns of a Godot transform.
pub fn basis_cols(t: Transform3D) -> [glam::Vec3; 3] {
    [
        vec3(t.basis.col_a()),
        vec3(t.basis.col_b()),
        vec3(t.basis.col_c()),
    ]
}

/// Views Godot vectors as glam vectors without copying (both are three packed f32).
pub fn vec3_slice(v: &[Vector3]) -> &[glam::Vec3] {
    const _: () = assert!(std::mem::size_of::<Vector3>() == std::mem::size_of::<glam::Vec3>());
    const _: () = assert!(std::mem::align_of::<Vector3>() == std::mem::align_of::<glam::Vec3>());
    // SAFETY: same size, alignment and field order (x, y, z as f32), checked above.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<glam::Vec3>(), v.len()) }
}

/// Views Godot 4D vectors as float quadruples without copying (both are four packed f32).
pub fn vec4_slice(v: &[godot::builtin::Vector4]) -> &[[f32; 4]] {
    const _: () =
        assert!(std::mem::size_of::<godot::builtin::Vector4>() == std::mem::size_of::<[f32; 4]>());
    const _: () = assert!(
        std::mem::align_of::<godot::builtin::Vector4>() == std::mem::align_of::<[f32; 4]>()
    );
    // SAFETY: same size and alignment, fields x, y, z, w as f32 in order (checked above).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<[f32; 4]>(), v.len()) }
}

/// Views Godot colours as RGBA float quadruples without copying (both are four packed f32).
pub fn rgba_slice(c: &[godot::builtin::Color]) -> &[[f32; 4]] {
    const _: () =
        assert!(std::mem::size_of::<godot::builtin::Color>() == std::mem::size_of::<[f32; 4]>());
    const _: () =
        assert!(std::mem::align_of::<godot::builtin::Color>() == std::mem::align_of::<[f32; 4]>());
    // SAFETY: same size and alignment, fields r, g, b, a as f32 in order (checked above).
    unsafe { std::slice::from_raw_parts(c.as_ptr().cast::<[f32; 4]>(), c.len()) }
}

/// A Godot colour as RGBA floats.
pub fn rgba(c: godot::builtin::Color) -> [f32; 4] {
    [c.r, c.g, c.b, c.a]
}

/// A typed array of `T` (or nulls) from any array, typed or untyped, as Godot's own typed-array
/// properties convert: every element must be a `T` or null, else the error names the first
/// element that is not (`what[i]`).
pub fn typed_objects<T>(array: &AnyArray, what: &str) -> Result<Array<Option<Gd<T>>>, String>
where
    T: Inherits<Object> + godot::obj::GodotClass,
{
    let mut out: Array<Option<Gd<T>>> = Array::new();
    for (i, v) in array.iter_shared().enumerate() {
        if v.is_nil() {
            out.push(None::<&Gd<T>>);
            continue;
        }
        match v.try_to::<Gd<T>>() {
            Ok(obj) => out.push(Some(&obj)),
            Err(_) => {
                return Err(format!(
                    "{what}[{i}] is {}, not a {}",
                    describe(&v),
                    T::class_id()
                ))
            }
        }
    }
    Ok(out)
}

/// A short description of a variant's type for an error message (an object's class name).
fn describe(v: &Variant) -> String {
    match v.try_to::<Gd<Object>>() {
        Ok(obj) => format!("a {}", obj.get_class()),
        Err(_) => format!("a {:?} ({v})", v.get_type()),
    }
}
