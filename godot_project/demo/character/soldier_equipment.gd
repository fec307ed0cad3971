## The soldier's equipment: a rigid sword (carried by a BoneAttachment3D on
## Hand_R) and a round shield skinned entirely to ForeArm_L with its own Skin.
extends RefCounted

const Rig := preload("res://demo/character/soldier_rig.gd")
const Surface := preload("res://demo/character/soldier_surface.gd")

## Offset of the shield's centre from the ForeArm_L joint, in that bone's frame:
## on the outside of the forearm (-X at rest), half-way to the wrist.
const SHIELD_CENTRE := Vector3(-0.07, -0.13, 0.0)

## (radius, height along the shield's outward axis), from the boss to the back.
const SHIELD_PROFILE := [
	Vector3(0.0, 0.083, 0), Vector3(0.03, 0.077, 0), Vector3(0.05, 0.062, 0),
	Vector3(0.06, 0.048, 0), Vector3(0.075, 0.043, 0), Vector3(0.17, 0.035, 0),
	Vector3(0.265, 0.022, 0), Vector3(0.29, 0.019, 0), Vector3(0.305, 0.006, 0),
	Vector3(0.296, -0.01, 0), Vector3(0.27, -0.006, 0), Vector3(0.15, 0.0, 0),
	Vector3(0.0, 0.0, 0),
]
const SHIELD_FIELD := Color(0.90, 0.84, 0.70)
const SHIELD_PAINT := Color(0.45, 0.10, 0.08)
const SHIELD_METAL := Color(0.55, 0.56, 0.58)
const SHIELD_WOOD := Color(0.42, 0.28, 0.15)


## The sword in its own frame: grip centred on the origin, blade along -Z with
## its edges along +-Y, pommel on +Z.
static func sword_mesh() -> ArrayMesh:
	var s := Surface.new(PackedStringArray(), [], false, false)
	var none := Callable()
	# Tubes are modelled along -Y; this turns -Y into -Z.
	var along_z := Transform3D(Basis(Vector3.RIGHT, PI / 2.0), Vector3.ZERO)
	s.add_patch(8, 6,
		func(u, v): return Surface.ellipsoid(Vector3(0, 0, 0.078), Vector3(0.024, 0.024, 0.022), u, v),
		Transform3D.IDENTITY, none, none, {})
	s.add_patch(8, 6,
		func(u, v): return Surface.tube_down(0.062, -0.058, func(_t): return 0.016, u, v),
		along_z, none, none, {})
	s.add_patch(10, 6,
		func(u, v): return Surface.ellipsoid(Vector3(0, 0, -0.066), Vector3(0.018, 0.1, 0.02), u, v),
		Transform3D.IDENTITY, none, none, {})
	s.add_patch(8, 18,
		func(u, v): return Surface.tube_down(-0.07, -0.86, _blade_width, u, v, Vector2(0.2, 1.0)),
		along_z, none, none, {})
	var mesh := ArrayMesh.new()
	mesh.resource_name = "Sword"
	mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, s.arrays())
	mesh.surface_set_name(0, "Steel")
	return mesh


## The shield, modelled in bind space on the bind pose of ForeArm_L. Its one
## Skin bind (index 0) is ForeArm_L, so every vertex has bone 0 at weight 1.
static func shield_mesh() -> ArrayMesh:
	var fore := Rig.bone_index("ForeArm_L")
	var g := Rig.bind_globals()
	var s := Surface.new(PackedStringArray(["ForeArm_L"]), [Rig.bind_segments()[fore]], true)
	# The lathe's axis is +Y; turn it to -X (outwards from the forearm).
	var frame := g[fore] * Transform3D(Basis(Vector3.BACK, PI / 2.0), SHIELD_CENTRE)
	s.add_patch(32, 24, _shield, frame, Callable(), _shield_color, {"ForeArm_L": 1.0})
	var mesh := ArrayMesh.new()
	mesh.resource_name = "Shield"
	mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, s.arrays())
	mesh.surface_set_name(0, "ShieldPaint")
	return mesh


static func _blade_width(t: float) -> float:
	return Surface.spline([Vector3(0.027, 0, 0), Vector3(0.026, 0, 0), Vector3(0.025, 0, 0),
		Vector3(0.024, 0, 0), Vector3(0.022, 0, 0), Vector3(0.016, 0, 0), Vector3(0.003, 0, 0)], t).x


static func _shield(u: float, v: float) -> Vector3:
	var q := Surface.spline(SHIELD_PROFILE, v)
	var phi := TAU * u
	return Vector3(q.x * sin(phi), q.y, q.x * cos(phi))


static func _shield_color(u: float, v: float, _p: Vector3) -> Color:
	var k := v * (SHIELD_PROFILE.size() - 1)
	if k < 3.6:
		return SHIELD_METAL
	if k < 7.0:
		return SHIELD_PAINT if int(floor(u * 8.0 + 0.5)) % 2 == 0 else SHIELD_FIELD
	if k < 10.2:
		return SHIELD_METAL.darkened(0.2)
	return SHIELD_WOOD
