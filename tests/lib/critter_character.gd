## A faceted low-poly critter, as a glTF export of one arrives: no NORMAL attribute (the importer
## gives it flat normals), float RGB vertex colours (COLOR_0) as its only colour, a material with
## metallic 0 and roughness 1 and no texture, and no skeleton: its one clip `Breathe` (looped)
## drives a morph target only. `save_through_gltf` writes it to a .glb with Godot's GLTFDocument
## and imports it again (the code the editor's importer runs).
class_name CritterCharacter
extends RefCounted

## Rings of the body (latitude) and points per ring: a coarse, faceted blob.
const RINGS := 5
const SEGMENTS := 7


static func build() -> Node3D:
	var root := Node3D.new()
	root.name = "Critter"
	var body := MeshInstance3D.new()
	body.name = "Body"
	body.mesh = _mesh()
	root.add_child(body)
	var player := AnimationPlayer.new()
	player.name = "AnimationPlayer"
	var lib := AnimationLibrary.new()
	lib.add_animation("Breathe", _breathe())
	player.add_animation_library("", lib)
	root.add_child(player)
	for n in root.find_children("*", "", true, false):
		n.owner = root
	return root


## The critter after a round trip through glTF, saved to `path` (a .tscn); returns the error.
static func save_through_gltf(path: String, glb_path: String) -> int:
	return QuirkyCharacter.gltf_round_trip(build(), path, glb_path)


## An indexed blob of RINGS x SEGMENTS points plus two poles, without normals, coloured per
## vertex, with one morph target (`Puff`) that swells the belly and lifts the head.
static func _mesh() -> ArrayMesh:
	var verts := PackedVector3Array()
	var colors := PackedColorArray()
	var puffed := PackedVector3Array()
	var indices := PackedInt32Array()
	verts.append(Vector3(0, 0.05, 0))
	for r in RINGS:
		var lat := PI * (r + 1) / (RINGS + 1)
		for s in SEGMENTS:
			var lon := TAU * s / SEGMENTS + 0.3 * r
			var radius := 0.35 * sin(lat) * (1.0 + 0.15 * sin(3.0 * lon))
			verts.append(Vector3(radius * cos(lon), 0.4 - 0.35 * cos(lat), radius * sin(lon) * 1.4))
	verts.append(Vector3(0, 0.75, 0))
	for i in verts.size():
		var v := verts[i]
		colors.append(Color(0.3 + 0.6 * v.y, 0.8 - 0.5 * v.y, 0.25 + 0.4 * absf(v.x) * 2.0))
		var belly := clampf(1.0 - absf(v.y - 0.35) * 3.0, 0.0, 1.0)
		puffed.append(v + Vector3(v.x * 0.35 * belly, 0.08 * v.y, v.z * 0.35 * belly))
	var last := verts.size() - 1
	for s in SEGMENTS:
		var n := (s + 1) % SEGMENTS
		indices.append_array([0, 1 + s, 1 + n])
		for r in RINGS - 1:
			var a := 1 + r * SEGMENTS
			var b := a + SEGMENTS
			indices.append_array([a + s, b + s, b + n, a + s, b + n, a + n])
		var top := 1 + (RINGS - 1) * SEGMENTS
		indices.append_array([top + s, last, top + n])
	var arrays := []
	arrays.resize(Mesh.ARRAY_MAX)
	arrays[Mesh.ARRAY_VERTEX] = verts
	arrays[Mesh.ARRAY_COLOR] = colors
	arrays[Mesh.ARRAY_INDEX] = indices
	var shape := []
	shape.resize(Mesh.ARRAY_MAX)
	shape[Mesh.ARRAY_VERTEX] = puffed
	var mesh := ArrayMesh.new()
	mesh.add_blend_shape("Puff")
	mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, arrays, [shape])
	var mat := StandardMaterial3D.new()
	mat.vertex_color_use_as_albedo = true
	mat.metallic = 0.0
	mat.roughness = 1.0
	mesh.surface_set_material(0, mat)
	return mesh


static func _breathe() -> Animation:
	var a := Animation.new()
	a.length = 1.2
	a.loop_mode = Animation.LOOP_LINEAR
	var t := a.add_track(Animation.TYPE_BLEND_SHAPE)
	a.track_set_path(t, "Body:Puff")
	for k in 9:
		var time := 1.2 * k / 8.0
		a.blend_shape_track_insert_key(t, time, 0.5 - 0.5 * cos(TAU * k / 8.0))
	return a
