## The soldier's skinned body: three surfaces (Armor, Skin, Leather) modelled in
## the bind pose of soldier_rig.gd (arms in an A-pose, legs apart).
extends RefCounted

const Rig := preload("res://demo/character/soldier_rig.gd")
const Surface := preload("res://demo/character/soldier_surface.gd")
const Look := preload("res://demo/character/soldier_look.gd")

const CLOTH := Color(0.33, 0.24, 0.16)
const BRACER := Color(0.45, 0.29, 0.15)
const TROUSERS := Color(0.38, 0.32, 0.24)
const BOOT := Color(0.14, 0.10, 0.07)
const EYE := Color(0.05, 0.05, 0.06)

## (x radius, height, z radius) from the bottom pole up to the collar.
const TORSO_PROFILE := [
	Vector3(0.0, 0.93, 0.0), Vector3(0.11, 0.875, 0.09), Vector3(0.188, 0.855, 0.155),
	Vector3(0.182, 0.90, 0.148), Vector3(0.168, 1.0, 0.134), Vector3(0.158, 1.08, 0.125),
	Vector3(0.163, 1.16, 0.129), Vector3(0.178, 1.26, 0.139), Vector3(0.188, 1.36, 0.143),
	Vector3(0.19, 1.43, 0.134), Vector3(0.155, 1.49, 0.112), Vector3(0.085, 1.528, 0.076),
	Vector3(0.056, 1.545, 0.056), Vector3(0.0, 1.555, 0.0),
]
const HEAD_CENTRE := Vector3(0, 1.69, -0.005)
const HEAD_RADII := Vector3(0.092, 0.112, 0.1)


## Returns the body mesh. Its bone indices are the Skin's bind indices, which
## equal the skeleton's bone indices: the body's Skin binds every bone in order.
static func build() -> ArrayMesh:
	var names := Rig.bone_names()
	var segs := Rig.bind_segments()
	var g := Rig.bind_globals()
	var armor := Surface.new(names, segs)
	var skin := Surface.new(names, segs)
	var leather := Surface.new(names, segs, true)
	var none := Callable()

	# Torso (tunic), in skeleton space.
	armor.add_patch(24, 22, _torso, Transform3D.IDENTITY,
		func(u, _v, p): return Vector2(u, Look.tunic_v(p.y)), none,
		{"Hips": 1.0, "Spine": 1.0, "Chest": 1.0, "Neck": 0.5,
		"Shoulder_L": 0.8, "Shoulder_R": 0.8,
		"Thigh_L": 0.15, "Thigh_R": 0.15})
	# Helmet.
	armor.add_patch(28, 18, _helmet, Transform3D.IDENTITY,
		func(u, v, _p): return Vector2(u, Look.TUNIC_V + 0.25 * minf(v / 0.75, 1.0)), none,
		{"Head": 1.0})
	# Neck and head.
	skin.add_patch(10, 6,
		func(u, v): return Vector3(0, 0, 0.005) + Surface.tube_down(1.64, 1.46,
			func(_t): return 0.05, u, v),
		Transform3D.IDENTITY, none, none,
		{"Neck": 1.0, "Head": 0.7, "Chest": 0.7})
	skin.add_patch(18, 12, _head, Transform3D.IDENTITY, none, none,
		{"Head": 1.0, "Neck": 0.4})
	# Eyes.
	for side in [-1.0, 1.0]:
		var c := Vector3(0.034 * side, 1.702, -0.087)
		leather.add_patch(6, 4,
			func(u, v): return Surface.ellipsoid(c, Vector3(0.013, 0.013, 0.011), u, v),
			Transform3D.IDENTITY, none, func(_u, _v, _p): return EYE, {"Head": 1.0})

	for s in ["L", "R"]:
		var arm := g[Rig.bone_index("UpperArm_" + s)]
		var arm_inf := {"Chest": 0.3, "Shoulder_" + s: 1.0,
			"UpperArm_" + s: 1.0, "ForeArm_" + s: 1.0, "Hand_" + s: 1.0}
		# Shoulder pad.
		armor.add_patch(12, 6,
			func(u, v): return Surface.ellipsoid(Vector3(0, 0.014, 0), Vector3(0.086, 0.062, 0.09), u, v),
			arm, func(u, v, _p): return Vector2(u, Look.TUNIC_V + 0.25 * (1.0 - v)), none,
			{"UpperArm_" + s: 1.0, "Shoulder_" + s: 0.25})
		# Sleeve and bracer: one tube from the shoulder to the wrist.
		leather.add_patch(10, 20,
			func(u, v): return Surface.tube_down(0.035, -0.53, _arm_radius, u, v),
			arm, none, _arm_color, arm_inf)
		# Fist.
		skin.add_patch(10, 8,
			func(u, v): return Surface.ellipsoid(Vector3(0, -0.058, -0.004), Vector3(0.038, 0.06, 0.052), u, v),
			g[Rig.bone_index("Hand_" + s)], none, none,
			{"Hand_" + s: 1.0, "ForeArm_" + s: 0.35})
		# Leg: trousers and boot shaft.
		leather.add_patch(12, 22,
			func(u, v): return Surface.tube_down(0.09, -0.87, _leg_radius, u, v),
			g[Rig.bone_index("Thigh_" + s)], none, _leg_color,
			{"Hips": 1.0, "Thigh_" + s: 1.0, "Shin_" + s: 1.0, "Foot_" + s: 0.5})
		# Boot foot.
		leather.add_patch(12, 8, _boot, g[Rig.bone_index("Foot_" + s)], none,
			func(_u, _v, _p): return BOOT, {"Foot_" + s: 1.0, "Shin_" + s: 0.4})

	var mesh := ArrayMesh.new()
	mesh.resource_name = "SoldierBody"
	var parts := [[armor, "Armor"], [skin, "Skin"], [leather, "Leather"]]
	for part in parts:
		mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, part[0].arrays())
		mesh.surface_set_name(mesh.get_surface_count() - 1, part[1])
	return mesh


static func _torso(u: float, v: float) -> Vector3:
	var q := Surface.spline(TORSO_PROFILE, v)
	var phi := TAU * u
	var front := maxf(0.0, -cos(phi))
	# A slight breastplate bulge at the front of the chest.
	var bulge := 0.018 * exp(-pow((q.y - 1.32) / 0.09, 2.0)) * front * front
	return Vector3(q.x * sin(phi), q.y, q.z * cos(phi) - bulge)


static func _head(u: float, v: float) -> Vector3:
	var p := Surface.ellipsoid(HEAD_CENTRE, HEAD_RADII, u, v)
	var d := p - HEAD_CENTRE
	# Narrower jaw.
	var jaw := clampf(-d.y / HEAD_RADII.y, 0.0, 1.0)
	p.x -= d.x * 0.22 * jaw * jaw
	# Nose: a bump at the front, just below eye level.
	var front := clampf(-d.z / HEAD_RADII.z, 0.0, 1.0)
	var nose := 0.026 * exp(-(d.x * d.x) / 0.00035 - pow(d.y + 0.008, 2.0) / 0.0009) * front
	p.z -= nose
	return p


## Kettle helmet: outer dome, brim out and back under, inner dome. A closed shell.
static func _helmet(u: float, v: float) -> Vector3:
	var rim := 1.33
	var outer := HEAD_RADII + Vector3(0.013, 0.013, 0.013)
	var inner := HEAD_RADII + Vector3(0.003, 0.0, 0.003)
	var phi := TAU * u
	var dir := Vector3(sin(phi), 0, cos(phi))
	var rim_y := HEAD_CENTRE.y + outer.y * cos(rim)
	if v <= 0.6:
		var th := (v / 0.6) * rim
		var crest := 0.014 * exp(-pow(sin(phi), 2.0) / 0.03) * clampf(1.25 - th, 0.0, 1.0)
		var p := HEAD_CENTRE + Vector3(outer.x * sin(th) * dir.x, outer.y * cos(th), outer.z * sin(th) * dir.z)
		return p + (p - HEAD_CENTRE).normalized() * crest
	var s_out := sin(rim)
	if v <= 0.75:
		var k := (v - 0.6) / 0.15
		var s := lerpf(s_out, s_out * 1.3, k)
		return Vector3(HEAD_CENTRE.x + outer.x * s * dir.x, rim_y - 0.006 * k, HEAD_CENTRE.z + outer.z * s * dir.z)
	if v <= 0.85:
		var k := (v - 0.75) / 0.1
		var s := lerpf(s_out * 1.3, s_out, k)
		var r := outer.lerp(inner, k)
		return Vector3(HEAD_CENTRE.x + r.x * s * dir.x, rim_y - 0.014, HEAD_CENTRE.z + r.z * s * dir.z)
	var th := (1.0 - (v - 0.85) / 0.15) * rim
	return HEAD_CENTRE + Vector3(inner.x * sin(th) * dir.x, inner.y * cos(th) - 0.004, inner.z * sin(th) * dir.z)


static func _arm_radius(t: float) -> float:
	return Surface.spline([Vector3(0.064, 0, 0), Vector3(0.059, 0, 0), Vector3(0.051, 0, 0),
		Vector3(0.048, 0, 0), Vector3(0.055, 0, 0), Vector3(0.048, 0, 0), Vector3(0.04, 0, 0)], t).x


static func _arm_color(_u: float, v: float, _p: Vector3) -> Color:
	return CLOTH.lerp(BRACER, smoothstep(0.52, 0.62, v))


static func _leg_radius(t: float) -> float:
	return Surface.spline([Vector3(0.096, 0, 0), Vector3(0.089, 0, 0), Vector3(0.077, 0, 0),
		Vector3(0.066, 0, 0), Vector3(0.071, 0, 0), Vector3(0.061, 0, 0), Vector3(0.051, 0, 0)], t).x


static func _leg_color(_u: float, v: float, _p: Vector3) -> Color:
	return TROUSERS.lerp(BOOT, smoothstep(0.68, 0.72, v))


## Boot around the ankle joint, toe towards -Z, sole flat on y = -ANKLE_HEIGHT.
static func _boot(u: float, v: float) -> Vector3:
	var centre := Vector3(0, -0.034, -0.045)
	var r := Vector3(0.052, 0.046, 0.125)
	var phi := TAU * u
	var theta := PI * (1.0 - v)
	var c := cos(theta)
	# Flatten the lower half towards the sole.
	var y := r.y * c if c > 0.0 else -r.y * pow(-c, 0.45)
	return centre + Vector3(r.x * sin(theta) * sin(phi), y, r.z * sin(theta) * cos(phi))
