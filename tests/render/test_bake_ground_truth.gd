# decode_frame against Godot's own posing (needs the real renderer: skins live in the
# RenderingServer). Per MeshInstance3D in depth-first order: bake_mesh_from_current_skeleton_pose()
# for skinned meshes, bake_mesh_from_current_blend_shape_mix() for blend shapes, else the mesh's
# vertices; each moved by the node's transform relative to the character root.
extends VatTest

const FRAMES_PER_CLIP := 5


func _cases() -> Array:
	var out := [{"name": "soldier", "path": "res://generated/soldier.tscn", "clips": ["idle", "walk", "attack", "die"]}]
	var robot := asset_path("RobotExpressive.glb")
	out.append({"name": "robot", "path": robot, "clips": ["Walking", "Punch", "Wave", "Yes"]})
	return out


func _meshes_of(root: Node) -> Array:
	var out := []
	for n in root.find_children("*", "MeshInstance3D", true, false):
		if n.is_visible_in_tree() and n.mesh != null and n.mesh.get_surface_count() > 0:
			out.append(n)
	return out


func _godot_pose(root: Node3D) -> Dictionary:
	var points := PackedVector3Array()
	var normals := PackedVector3Array()
	var inv := root.global_transform.affine_inverse()
	for mi: MeshInstance3D in _meshes_of(root):
		var mesh: Mesh = mi.mesh
		var skinned: bool = mi.skin != null or mesh.surface_get_format(0) & Mesh.ARRAY_FORMAT_BONES
		if skinned:
			mesh = mi.bake_mesh_from_current_skeleton_pose()
		elif mi.get_blend_shape_count() > 0:
			mesh = mi.bake_mesh_from_current_blend_shape_mix()
		var xf := inv * mi.global_transform
		var nb := xf.basis.inverse().transposed()
		for s in mesh.get_surface_count():
			var arrays := mesh.surface_get_arrays(s)
			for v in arrays[Mesh.ARRAY_VERTEX]:
				points.append(xf * v)
			for n in arrays[Mesh.ARRAY_NORMAL]:
				normals.append((nb * n).normalized())
	return {"points": points, "normals": normals}


func _compare(case: Dictionary, precision: int, pos_tol: float, deg_tol: float) -> void:
	var scene := load(case["path"]) as PackedScene
	var va := VertexAnimation.new()
	va.source_scene = scene
	va.clips = PackedStringArray(case["clips"])
	va.precision = precision
	if not check_eq(va.bake(), OK, "%s bakes" % case["name"]):
		return
	var diag: float = va.get_bounds().size.length()
	var root := scene.instantiate() as Node3D
	self.root.add_child(root)
	var player: AnimationPlayer = root.find_children("*", "AnimationPlayer", true, false)[0]
	var worst := 0.0
	var worst_deg := 0.0
	var worst_at := -1
	var worst_n_at := -1
	for c in va.get_clip_count():
		var n: int = va.get_clip_frame_count(c)
		for k in FRAMES_PER_CLIP:
			var frame := int(round(float(k) * (n - 1) / (FRAMES_PER_CLIP - 1)))
			for skel in root.find_children("*", "Skeleton3D", true, false):
				skel.reset_bone_poses()
			player.play(va.get_clip_names()[c])
			player.seek(va.get_frame_time(c, frame), true)
			player.pause()
			await frames(2)
			var truth := _godot_pose(root)
			var ours: PackedVector3Array = va.decode_frame(c, frame)
			var our_normals: PackedVector3Array = va.decode_frame_normals(c, frame)
			if not check_eq(ours.size(), truth["points"].size(), "%s vertex count" % case["name"]):
				return
			for i in ours.size():
				var e: float = ours[i].distance_to(truth["points"][i])
				if e > worst:
					worst = e
					worst_at = i
				var tn: Vector3 = truth["normals"][i]
				var deg := rad_to_deg(our_normals[i].angle_to(tn))
				if tn.length() > 0.5 and deg > worst_deg:
					worst_deg = deg
					worst_n_at = i
	var label := "%s %s" % [case["name"], "float" if precision == 1 else "half"]
	print("    %s: max vertex error %s of the diagonal (%s), max normal error %s deg, worst vertex %d" % [label, worst / diag, diag, worst_deg, worst_at])
	check(worst <= pos_tol * diag, "%s: max vertex error %s of the diagonal <= %s" % [label, worst / diag, pos_tol])
	check(worst_deg <= deg_tol, "%s: max normal error %s deg <= %s (vertex %d)" % [label, worst_deg, deg_tol, worst_n_at])


func test_soldier_float() -> void:
	await _compare(_cases()[0], 1, 1e-4, 1.0)


func test_soldier_half() -> void:
	await _compare(_cases()[0], 0, 2e-3, 3.0)


func test_robot_float() -> void:
	var c: Dictionary = _cases()[1]
	if c["path"] == "":
		skip("RobotExpressive.glb not found")
		return
	await _compare(c, 1, 1e-4, 1.0)


func test_robot_half() -> void:
	var c: Dictionary = _cases()[1]
	if c["path"] == "":
		skip("RobotExpressive.glb not found")
		return
	await _compare(c, 0, 2e-3, 3.0)
