## Accumulates one mesh surface from closed parametric patches (tubes, lathes,
## ellipsoids), with smooth normals, UVs, optional vertex colours and up to four
## distance-blended bone weights per vertex.
##
## A patch is a function pos(u, v) on [0, 1] x [0, 1], periodic in u, whose
## v = 0 and v = 1 rows may collapse to poles. Normals come from central
## differences of that function, so they are smooth across the u seam and across
## the joins of a profile. Triangles are wound clockwise seen from outside, as
## Godot expects for front faces.
extends RefCounted

const EPS := 1e-3
## Share of a tube's v taken by each rounded end cap.
const CAP_V := 0.15

var positions := PackedVector3Array()
var normals := PackedVector3Array()
var uvs := PackedVector2Array()
var colors := PackedColorArray()
var bones := PackedInt32Array()
var weights := PackedFloat32Array()
var indices := PackedInt32Array()

var use_colors := false
var skinned := true
## Bone name -> bind index of the Skin this surface is drawn with.
var bind_of := {}
## [head, tail] per bind index, in bind space (see soldier_rig.gd).
var segments: Array = []


## bind_names[i] and bind_segments[i] describe bind index i; a rigid surface
## passes empty arrays and p_skinned = false.
func _init(bind_names: PackedStringArray, bind_segments: Array, p_use_colors := false,
		p_skinned := true) -> void:
	for i in bind_names.size():
		bind_of[bind_names[i]] = i
	segments = bind_segments
	use_colors = p_use_colors
	skinned = p_skinned


func vertex_count() -> int:
	return positions.size()


## Adds an (nu + 1) x (nv + 1) grid patch.
## pos_fn(u, v) -> Vector3 in the part's own frame; frame maps it to bind space.
## uv_fn(u, v, p_local) -> Vector2, or an empty Callable for (u, v).
## color_fn(u, v, p_local) -> Color, used when the surface has colours.
## influences: {bone name: factor}; a single entry binds the patch to one bone.
func add_patch(nu: int, nv: int, pos_fn: Callable, frame: Transform3D, uv_fn: Callable,
		color_fn: Callable, influences: Dictionary) -> void:
	var base := positions.size()
	var local := PackedVector3Array()
	var local_n := PackedVector3Array()
	for j in nv + 1:
		var v := float(j) / nv
		for i in nu + 1:
			var u := float(i) / nu
			var p: Vector3 = pos_fn.call(u, v)
			local.append(p)
			local_n.append(_normal(pos_fn, u, v))
	# Orient: the patch is closed, so its signed volume says whether du x dv
	# points outwards.
	var volume := 0.0
	for j in nv:
		for i in nu:
			var a := local[j * (nu + 1) + i]
			var b := local[j * (nu + 1) + i + 1]
			var c := local[(j + 1) * (nu + 1) + i + 1]
			var d := local[(j + 1) * (nu + 1) + i]
			volume += a.dot(b.cross(c)) + a.dot(c.cross(d))
	var outward := volume > 0.0
	for k in local.size():
		var n := local_n[k] if outward else -local_n[k]
		var p := frame * local[k]
		positions.append(p)
		normals.append((frame.basis * n).normalized())
		var u := float(k % (nu + 1)) / nu
		var v := floorf(float(k) / (nu + 1)) / nv
		uvs.append(Vector2(u, v) if uv_fn.is_null() else uv_fn.call(u, v, local[k]))
		if use_colors:
			colors.append(color_fn.call(u, v, local[k]))
		if skinned:
			_append_weights(p, influences)
	for j in nv:
		for i in nu:
			var a := base + j * (nu + 1) + i
			var b := a + 1
			var d := a + nu + 1
			var c := d + 1
			_triangle(a, b, c, outward)
			_triangle(a, c, d, outward)


## Returns the ArrayMesh surface arrays.
func arrays() -> Array:
	var arr := []
	arr.resize(Mesh.ARRAY_MAX)
	arr[Mesh.ARRAY_VERTEX] = positions
	arr[Mesh.ARRAY_NORMAL] = normals
	arr[Mesh.ARRAY_TEX_UV] = uvs
	if use_colors:
		arr[Mesh.ARRAY_COLOR] = colors
	if skinned:
		arr[Mesh.ARRAY_BONES] = bones
		arr[Mesh.ARRAY_WEIGHTS] = weights
	arr[Mesh.ARRAY_INDEX] = indices
	return arr


func _normal(pos_fn: Callable, u: float, v: float) -> Vector3:
	# Poles: step just inside the patch, where du x dv is still defined.
	var vc := clampf(v, 2.0 * EPS, 1.0 - 2.0 * EPS)
	var du: Vector3 = pos_fn.call(u + EPS, vc) - pos_fn.call(u - EPS, vc)
	var dv: Vector3 = pos_fn.call(u, vc + EPS) - pos_fn.call(u, vc - EPS)
	var n := du.cross(dv)
	return n.normalized() if n.length_squared() > 1e-20 else Vector3.UP


func _triangle(a: int, b: int, c: int, outward: bool) -> void:
	# Skip the degenerate triangles of a pole row.
	var area := (positions[b] - positions[a]).cross(positions[c] - positions[a]).length()
	if area < 1e-10:
		return
	# (a, b, c) turns counter-clockwise around du x dv; Godot's front faces are
	# clockwise, so reverse it when du x dv points outwards.
	if outward:
		indices.append_array([a, c, b])
	else:
		indices.append_array([a, b, c])


## Up to four weights from the distance to each influencing bone's segment,
## falling off as 1 / d^4 so that joints blend smoothly over a few centimetres.
func _append_weights(p: Vector3, influences: Dictionary) -> void:
	var cand := []
	for bone in influences:
		var bi: int = bind_of[bone]
		var seg: Array = segments[bi]
		var d := _segment_distance(p, seg[0], seg[1])
		cand.append([float(influences[bone]) / pow(d + 0.015, 4.0), bi])
	cand.sort_custom(func(x, y): return x[0] > y[0])
	cand = cand.slice(0, 4)
	var total := 0.0
	for c in cand:
		total += c[0]
	# Drop negligible influences, then renormalise so the weights sum to 1.
	var kept := []
	var kept_total := 0.0
	for c in cand:
		if c[0] / total >= 0.01:
			kept.append(c)
			kept_total += c[0]
	# Godot stores weights as 16-bit fractions of 65535. Quantise them so the
	# stored integers sum to exactly 65535, and pass each a quarter step above
	# its integer so that both truncation and rounding recover it.
	var units := []
	var used := 0
	for k in kept.size():
		var q := int(round(kept[k][0] / kept_total * 65535.0))
		units.append(q)
		used += q
	units[0] += 65535 - used
	for k in 4:
		if k < kept.size() and units[k] > 0:
			bones.append(kept[k][1])
			weights.append((units[k] + 0.25) / 65535.0 if units[k] < 65535 else 1.0)
		else:
			bones.append(0)
			weights.append(0.0)


static func _segment_distance(p: Vector3, a: Vector3, b: Vector3) -> float:
	var ab := b - a
	var t := clampf((p - a).dot(ab) / maxf(ab.length_squared(), 1e-12), 0.0, 1.0)
	return p.distance_to(a + ab * t)


# --- Shape helpers shared by the parts ---

## Catmull-Rom through points at parameter t in [0, 1] (uniform in the index).
static func spline(points: Array, t: float) -> Vector3:
	var n := points.size()
	var x := clampf(t, 0.0, 1.0) * (n - 1)
	var i := mini(int(floor(x)), n - 2)
	var f := x - i
	var p0: Vector3 = points[maxi(i - 1, 0)]
	var p1: Vector3 = points[i]
	var p2: Vector3 = points[i + 1]
	var p3: Vector3 = points[mini(i + 2, n - 1)]
	return 0.5 * ((2.0 * p1) + (-p0 + p2) * f + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * f * f
		+ (-p0 + 3.0 * p1 - 3.0 * p2 + p3) * f * f * f)


## Ellipsoid around centre with radii r; u is longitude (u = 0.5 faces -Z),
## v runs from the bottom pole (v = 0) to the top pole (v = 1).
static func ellipsoid(centre: Vector3, r: Vector3, u: float, v: float) -> Vector3:
	var phi := TAU * u
	var theta := PI * (1.0 - v)
	var s := sin(theta)
	return centre + Vector3(r.x * s * sin(phi), r.y * cos(theta), r.z * s * cos(phi))


## Capsule-like tube along -Y from y = top to y = bottom with radius
## radius_fn(t), t in [0, 1] along the length, closed by rounded caps (the first
## and last CAP_V of v) that reach 0.6 of the end radius beyond each end.
## squash scales the cross-section in x and z.
static func tube_down(top: float, bottom: float, radius_fn: Callable, u: float, v: float,
		squash := Vector2.ONE) -> Vector3:
	var phi := TAU * u
	var y: float
	var r: float
	if v < CAP_V or v > 1.0 - CAP_V:
		var at_top := v < CAP_V
		var a := (v if at_top else 1.0 - v) / CAP_V * PI * 0.5
		var r_end: float = radius_fn.call(0.0 if at_top else 1.0)
		y = top + r_end * 0.6 * cos(a) if at_top else bottom - r_end * 0.6 * cos(a)
		r = r_end * sin(a)
	else:
		var t := (v - CAP_V) / (1.0 - 2.0 * CAP_V)
		r = radius_fn.call(t)
		y = lerpf(top, bottom, t)
	return Vector3(r * sin(phi) * squash.x, y, r * cos(phi) * squash.y)
