## A small generated character with the quirks real exports have and the shared corpus may lack,
## built as Godot's glTF importer would leave it:
## - the skeleton under an `Armature` node scaled by 100 and rotated -90 degrees about X (Z-up,
##   centimetre-sized bones, as FBX2glTF and Blender exports have);
## - a skinned body whose surfaces carry seven UV sets (UV, UV2, and the third to seventh in
##   CUSTOM0 and CUSTOM1 as RGBA floats and CUSTOM2 as RG floats, where the importer puts them);
## - a crest coloured by vertex colours alone (glTF COLOR_0, no texture), rigid on a
##   BoneAttachment3D, one-sided triangles in a double-sided material (glTF doubleSided);
## - clips: `Walk` (looped, the hips carried forward 1.2 m per second with sway and bob: root
##   motion), `TPose` (zero length) and `Wave` (not looped, no root motion).
## `build()` returns the scene; `save(path)` writes it as a .tscn for the command-line baker.
class_name QuirkyCharacter
extends RefCounted

## Hips travel per second along the character's +Z (its forward), in metres.
const WALK_SPEED := 1.2
## The walk's vertical bob amplitude (m) and sideways sway amplitude (m).
const WALK_BOB := 0.04
const WALK_SWAY := 0.03
## Armature scale: bones and vertices are stored in hundredths.
const ARMATURE_SCALE := 100.0
const BONES := ["Root", "Hips", "Spine", "Head", "LegL", "LegR"]
const PARENTS := [-1, 0, 1, 2, 1, 1]
## Rest offsets from the parent, in skeleton units (Z up).
const OFFSETS := [Vector3(0, 0, 0), Vector3(0, 0, 0.009), Vector3(0, 0, 0.003), Vector3(0, 0, 0.004),
	Vector3(0.002, 0, 0), Vector3(-0.002, 0, 0)]


## With `eight_weights`, the body's surfaces use Godot's 8-weight skin format
## (ARRAY_FLAG_USE_8_BONE_WEIGHTS): the torso's and legs' vertices each follow all six bones.
static func build(eight_weights := false) -> PackedScene:
	var root := Node3D.new()
	root.name = "Quirky"
	var armature := Node3D.new()
	armature.name = "Armature"
	armature.transform = Transform3D(Basis(Vector3.RIGHT, -PI / 2).scaled(Vector3.ONE * ARMATURE_SCALE), Vector3.ZERO)
	root.add_child(armature)
	var skel := Skeleton3D.new()
	skel.name = "Skeleton3D"
	armature.add_child(skel)
	for i in BONES.size():
		skel.add_bone(BONES[i])
		if PARENTS[i] >= 0:
			skel.set_bone_parent(i, PARENTS[i])
		skel.set_bone_rest(i, Transform3D(Basis(), OFFSETS[i]))
	skel.reset_bone_poses()
	var body := MeshInstance3D.new()
	body.name = "Body"
	body.mesh = _body_mesh(eight_weights)
	body.skin = _skin(skel)
	skel.add_child(body)
	body.skeleton = NodePath("..")
	var attach := BoneAttachment3D.new()
	attach.name = "HeadAttachment"
	skel.add_child(attach)
	attach.bone_name = "Head"
	var crest := MeshInstance3D.new()
	crest.name = "Crest"
	crest.mesh = _crest_mesh()
	crest.position = Vector3(0, 0, 0.0035)
	attach.add_child(crest)
	var player := AnimationPlayer.new()
	player.name = "AnimationPlayer"
	var lib := AnimationLibrary.new()
	lib.add_animation("Walk", _walk())
	lib.add_animation("TPose", _tpose())
	lib.add_animation("Wave", _wave())
	player.add_animation_library("", lib)
	root.add_child(player)
	for n in root.find_children("*", "", true, false):
		n.owner = root
	var scene := PackedScene.new()
	scene.pack(root)
	root.free()
	return scene


## Builds the character (see `build`) and saves it to `path` (a .tscn); returns the error.
static func save(path: String, eight_weights := false) -> int:
	return ResourceSaver.save(build(eight_weights), path)


## The character after a round trip through glTF: exported to a .glb by Godot's GLTFDocument and
## imported again by it (the code the editor's importer runs), so the UV sets, the COLOR_0 part
## and the animations arrive as a real import has them. Saved to `path` (a .tscn).
static func save_through_gltf(path: String, glb_path: String) -> int:
	return gltf_round_trip(build().instantiate(), path, glb_path)


## Exports `node` (freed here) to `glb_path` with GLTFDocument, imports it again and saves the
## imported scene to `path`; returns the error. Shared by the generated characters.
static func gltf_round_trip(node: Node, path: String, glb_path: String) -> int:
	var holder := Node.new()
	holder.add_child(node)
	var state := GLTFState.new()
	var doc := GLTFDocument.new()
	var err := doc.append_from_scene(node, state)
	if err == OK:
		err = doc.write_to_filesystem(state, glb_path)
	holder.free()
	if err != OK:
		return err
	var state2 := GLTFState.new()
	var doc2 := GLTFDocument.new()
	err = doc2.append_from_file(glb_path, state2)
	if err != OK:
		return err
	var imported := doc2.generate_scene(state2)
	for n in imported.find_children("*", "", true, false):
		n.owner = imported
	var scene := PackedScene.new()
	err = scene.pack(imported)
	imported.free()
	return err if err != OK else ResourceSaver.save(scene, path)


static func _skin(skel: Skeleton3D) -> Skin:
	var skin := Skin.new()
	for i in BONES.size():
		skin.add_named_bind(BONES[i], skel.get_bone_global_rest(i).affine_inverse())
	return skin


## Two surfaces (legs and torso; head), each with seven UV sets and 4 bone weights per vertex
## (8 with `eight_weights`, the legs' and torso's spread over every bone).
static func _body_mesh(eight_weights := false) -> ArrayMesh:
	var mesh := ArrayMesh.new()
	var legs_torso := _Builder.new()
	legs_torso.eight = eight_weights
	legs_torso.box(Vector3(0.0015, 0, 0.0045), Vector3(0.0012, 0.0012, 0.009), [4])
	legs_torso.box(Vector3(-0.0015, 0, 0.0045), Vector3(0.0012, 0.0012, 0.009), [5])
	legs_torso.box(Vector3(0, 0, 0.0105), Vector3(0.005, 0.003, 0.003), [1, 2])
	var head := _Builder.new()
	head.eight = eight_weights
	head.box(Vector3(0, 0, 0.0175), Vector3(0.003, 0.003, 0.003), [3])
	var flags := (Mesh.ARRAY_CUSTOM_RGBA_FLOAT << Mesh.ARRAY_FORMAT_CUSTOM0_SHIFT) \
		| (Mesh.ARRAY_CUSTOM_RGBA_FLOAT << Mesh.ARRAY_FORMAT_CUSTOM1_SHIFT) \
		| (Mesh.ARRAY_CUSTOM_RG_FLOAT << Mesh.ARRAY_FORMAT_CUSTOM2_SHIFT)
	if eight_weights:
		flags |= Mesh.ARRAY_FLAG_USE_8_BONE_WEIGHTS
	for part in [[legs_torso, Color(0.2, 0.35, 0.8)], [head, Color(0.85, 0.65, 0.5)]]:
		mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, part[0].arrays(), [], {}, flags)
		var mat := StandardMaterial3D.new()
		mat.albedo_color = part[1]
		mesh.surface_set_material(mesh.get_surface_count() - 1, mat)
	return mesh


## A fin of four coloured triangles, coloured by its vertex colours only (as glTF's COLOR_0
## imports: a StandardMaterial3D with vertex_color_use_as_albedo).
static func _crest_mesh() -> ArrayMesh:
	var verts := PackedVector3Array()
	var colors := PackedColorArray()
	var normals := PackedVector3Array()
	var palette := [Color(0.9, 0.1, 0.1), Color(0.1, 0.8, 0.2), Color(0.95, 0.85, 0.1), Color(0.6, 0.2, 0.9)]
	# One-sided triangles facing the character's back (skeleton +Y): seen from the front only
	# because the material is double-sided, as glTF's doubleSided imports.
	for i in 4:
		var x0 := -0.0024 + 0.0012 * i
		for v in [Vector3(x0, 0, 0), Vector3(x0 + 0.0012, 0, 0), Vector3(x0 + 0.0006, 0, 0.005)]:
			verts.append(v)
			colors.append(palette[i])
			normals.append(Vector3(0, 1, 0))
	var arrays := []
	arrays.resize(Mesh.ARRAY_MAX)
	arrays[Mesh.ARRAY_VERTEX] = verts
	arrays[Mesh.ARRAY_NORMAL] = normals
	arrays[Mesh.ARRAY_COLOR] = colors
	var mesh := ArrayMesh.new()
	mesh.add_surface_from_arrays(Mesh.PRIMITIVE_TRIANGLES, arrays)
	var mat := StandardMaterial3D.new()
	mat.vertex_color_use_as_albedo = true
	mat.cull_mode = BaseMaterial3D.CULL_DISABLED
	mesh.surface_set_material(0, mat)
	return mesh


static func _walk() -> Animation:
	var a := Animation.new()
	a.length = 1.0
	a.loop_mode = Animation.LOOP_LINEAR
	var hips := a.add_track(Animation.TYPE_POSITION_3D)
	a.track_set_path(hips, "Armature/Skeleton3D:Hips")
	var leg_l := a.add_track(Animation.TYPE_ROTATION_3D)
	a.track_set_path(leg_l, "Armature/Skeleton3D:LegL")
	var leg_r := a.add_track(Animation.TYPE_ROTATION_3D)
	a.track_set_path(leg_r, "Armature/Skeleton3D:LegR")
	var s := 1.0 / ARMATURE_SCALE
	for k in 17:
		var t := k / 16.0
		# Skeleton -Y is the character's +Z (forward) once the armature turns Z-up to Y-up.
		var pos: Vector3 = OFFSETS[1] + Vector3(WALK_SWAY * s * sin(TAU * t), -WALK_SPEED * s * t, WALK_BOB * s * sin(2.0 * TAU * t))
		a.position_track_insert_key(hips, t, pos)
		a.rotation_track_insert_key(leg_l, t, Quaternion(Vector3.RIGHT, 0.5 * sin(TAU * t)))
		a.rotation_track_insert_key(leg_r, t, Quaternion(Vector3.RIGHT, -0.5 * sin(TAU * t)))
	return a


static func _tpose() -> Animation:
	var a := Animation.new()
	a.length = 0.0  # Godot clamps it to 0.001 s, as an imported pose clip has.
	for leg in [["LegL", 0.35], ["LegR", -0.35]]:
		var t := a.add_track(Animation.TYPE_ROTATION_3D)
		a.track_set_path(t, "Armature/Skeleton3D:" + leg[0])
		a.rotation_track_insert_key(t, 0.0, Quaternion(Vector3.FORWARD, leg[1]))
	return a


static func _wave() -> Animation:
	var a := Animation.new()
	a.length = 0.8
	var head := a.add_track(Animation.TYPE_ROTATION_3D)
	a.track_set_path(head, "Armature/Skeleton3D:Head")
	var spine := a.add_track(Animation.TYPE_ROTATION_3D)
	a.track_set_path(spine, "Armature/Skeleton3D:Spine")
	for k in 9:
		var t := 0.1 * k
		var w := sin(PI * t / 0.8)
		a.rotation_track_insert_key(head, t, Quaternion(Vector3.BACK, 0.8 * w))
		a.rotation_track_insert_key(spine, t, Quaternion(Vector3.RIGHT, 0.3 * w))
	return a


## Accumulates boxes with every vertex channel the body carries.
class _Builder:
	var verts := PackedVector3Array()
	var normals := PackedVector3Array()
	var uv := PackedVector2Array()
	var uv2 := PackedVector2Array()
	var custom0 := PackedFloat32Array()
	var custom1 := PackedFloat32Array()
	var custom2 := PackedFloat32Array()
	var bones := PackedInt32Array()
	var weights := PackedFloat32Array()
	var indices := PackedInt32Array()
	## Eight weights per vertex: boxes of two bones also give every other bone some weight.
	var eight := false

	## A box at `center` of `size` (skeleton space). One bone: weight 1. Two bones: the weight
	## moves from the first toward the second going up the box.
	func box(center: Vector3, size: Vector3, bone_ids: Array) -> void:
		var h := size * 0.5
		var faces := [
			[Vector3.RIGHT, Vector3.BACK, Vector3.UP], [Vector3.LEFT, Vector3.BACK, Vector3.DOWN],
			[Vector3.UP, Vector3.BACK, Vector3.LEFT], [Vector3.DOWN, Vector3.BACK, Vector3.RIGHT],
			[Vector3.BACK, Vector3.UP, Vector3.RIGHT], [Vector3.FORWARD, Vector3.UP, Vector3.LEFT],
		]
		for f in faces:
			var n: Vector3 = f[0]
			var u: Vector3 = f[1]
			var v: Vector3 = f[2]
			var base := verts.size()
			for corner: Vector2 in [Vector2(-1, -1), Vector2(1, -1), Vector2(1, 1), Vector2(-1, 1)]:
				var p: Vector3 = center + (n + u * corner.x + v * corner.y) * h
				verts.append(p)
				normals.append(n)
				var st := corner * 0.5 + Vector2(0.5, 0.5)
				uv.append(st)
				uv2.append(st * 0.5)
				custom0.append_array([st.x, st.y, 1.0 - st.x, 1.0 - st.y])  # UV sets 3 and 4
				custom1.append_array([st.y, st.x, st.x * 0.25, st.y * 0.25])  # UV sets 5 and 6
				custom2.append_array([st.x * 2.0, st.y * 2.0])  # UV set 7
				var up := clampf((p.z - (center.z - h.z)) / size.z, 0.0, 1.0)
				var own: Array = [[bone_ids[0], 1.0]] if bone_ids.size() == 1 \
					else [[bone_ids[0], 1.0 - 0.6 * up], [bone_ids[1], 0.6 * up]]
				if eight and bone_ids.size() > 1:
					# 70% as above, the rest over the four other bones, varying over the box.
					var others: Array = range(6).filter(func(b: int) -> bool: return not b in bone_ids)
					var shares := [0.4 + 0.1 * up, 0.3 - 0.1 * up, 0.2, 0.1]
					own = own.map(func(e: Array) -> Array: return [e[0], e[1] * 0.7])
					for k in others.size():
						own.append([others[k], 0.3 * shares[k]])
				var slots := 8 if eight else 4
				for k in slots:
					bones.append(own[k][0] if k < own.size() else 0)
					weights.append(own[k][1] if k < own.size() else 0.0)
			indices.append_array([base, base + 2, base + 1, base, base + 3, base + 2])

	func arrays() -> Array:
		var a := []
		a.resize(Mesh.ARRAY_MAX)
		a[Mesh.ARRAY_VERTEX] = verts
		a[Mesh.ARRAY_NORMAL] = normals
		a[Mesh.ARRAY_TEX_UV] = uv
		a[Mesh.ARRAY_TEX_UV2] = uv2
		a[Mesh.ARRAY_CUSTOM0] = custom0
		a[Mesh.ARRAY_CUSTOM1] = custom1
		a[Mesh.ARRAY_CUSTOM2] = custom2
		a[Mesh.ARRAY_BONES] = bones
		a[Mesh.ARRAY_WEIGHTS] = weights
		a[Mesh.ARRAY_INDEX] = indices
		return a
