# Bad input to the baker: each case gives a clear error and writes nothing partial.
extends VatTest


func _anim_player_with(names: Array, length := 1.0) -> AnimationPlayer:
	var player := AnimationPlayer.new()
	player.name = "AnimationPlayer"
	var lib := AnimationLibrary.new()
	for n in names:
		var a := Animation.new()
		a.length = length
		lib.add_animation(n, a)
	player.add_animation_library("", lib)
	return player


func _pack(root: Node) -> PackedScene:
	for c in root.find_children("*", "", true, false):
		c.owner = root
	var scene := PackedScene.new()
	scene.pack(root)
	root.free()
	return scene


func _box_character(with_player := true, clip_names := ["idle"], length := 1.0, mesh: Mesh = null) -> PackedScene:
	var root := Node3D.new()
	root.name = "Character"
	var mi := MeshInstance3D.new()
	mi.name = "Box"
	mi.mesh = mesh if mesh != null else BoxMesh.new()
	root.add_child(mi)
	if with_player:
		root.add_child(_anim_player_with(clip_names, length))
	return _pack(root)


func _bake(scene: PackedScene, clips := PackedStringArray()) -> int:
	var va := VertexAnimation.new()
	va.source_scene = scene
	va.clips = clips
	return va.bake()


func test_box_with_empty_clip_bakes() -> void:
	var va := VertexAnimation.new()
	va.source_scene = _box_character()
	check_eq(va.bake(), OK, "a static box with a 1 s clip bakes")
	check_eq(va.vertex_count, BoxMesh.new().get_mesh_arrays()[Mesh.ARRAY_VERTEX].size(), "vertex count is the box's")
	check_eq(va.get_clip_frame_count(0), 31, "non-looped 1 s clip at 30 fps has 31 frames")


func test_no_mesh_instance() -> void:
	var root := Node3D.new()
	root.add_child(_anim_player_with(["idle"]))
	var va := VertexAnimation.new()
	va.source_scene = _pack(root)
	check_eq(va.bake(), FAILED, "scene without MeshInstance3D fails")
	check(not va.is_baked(), "nothing was baked")


func test_no_animation_player() -> void:
	check_eq(_bake(_box_character(false)), FAILED, "scene without AnimationPlayer fails")


func test_no_animations() -> void:
	check_eq(_bake(_box_character(true, [])), FAILED, "AnimationPlayer without animations fails")


func test_unknown_clip() -> void:
	check_eq(_bake(_box_character(), PackedStringArray(["nope"])), FAILED, "unknown clip name fails")


func test_zero_length_clip_bakes_as_a_pose() -> void:
	# Godot clamps Animation.length to 0.001 s: that is its zero length (a TPose, a death pose).
	var va := VertexAnimation.new()
	va.source_scene = _box_character(true, ["still"], 0.0)
	check_eq(va.bake(), OK, "a zero-length clip bakes")
	check_eq(va.get_clip_frame_count(0), 1, "as one frame")
	check_eq(va.get_clip_duration(0), 0.0, "of zero duration")
	check(not va.is_clip_looped(0), "that never loops")
	check(va.get_bake_stats()["summary"].contains("one-frame poses: still"), "the summary says so: %s" % va.get_bake_stats()["summary"])


func test_clip_named_twice_is_refused() -> void:
	check_eq(_bake(_box_character(true, ["idle", "walk"]), PackedStringArray(["idle", "walk", "idle"])), FAILED, "a clip listed twice is refused")


func test_bad_rates_and_precision_are_refused() -> void:
	for bad in ["abc", -5.0, 0.0, INF, NAN]:
		var va := VertexAnimation.new()
		va.source_scene = _box_character(true, ["idle"])
		va.clip_fps = {"idle": bad}
		check_eq(va.bake(), FAILED, "clip_fps %s is refused" % [bad])
		check(not va.is_baked(), "nothing baked for clip_fps %s" % [bad])
	var va := VertexAnimation.new()
	va.source_scene = _box_character(true, ["idle"])
	va.precision = 7
	check_eq(va.bake(), FAILED, "precision 7 is refused")


func test_too_large_for_textures() -> void:
	# A 200x200 plane (40,401 vertices) x 9,001 frames (300 s at 30 fps) = 364M texels, more
	# than one 16384 x 16384 texture holds: refused before any frame is sampled.
	var plane := PlaneMesh.new()
	plane.subdivide_width = 199
	plane.subdivide_depth = 199
	var va := VertexAnimation.new()
	va.source_scene = _box_character(true, ["long"], 300.0, plane)
	check_eq(va.bake(), FAILED, "too many vertex-frames for one texture fails before sampling")
	check(not va.is_baked(), "nothing was baked")


func test_failed_rebake_keeps_previous_data() -> void:
	var va := VertexAnimation.new()
	va.source_scene = _box_character()
	check_eq(va.bake(), OK, "first bake")
	var before: PackedVector3Array = va.decode_frame(0, 0)
	va.clips = PackedStringArray(["missing"])
	check_eq(va.bake(), FAILED, "second bake fails")
	check(va.is_baked(), "still baked")
	check_eq(va.decode_frame(0, 0), before, "previous bake is intact")


func test_unwritable_output_leaves_old_file() -> void:
	var dir := "user://vat_test_save"
	DirAccess.make_dir_recursive_absolute(dir)
	var path := dir + "/old.res"
	var va := VertexAnimation.new()
	va.source_scene = _box_character()
	check_eq(va.bake(), OK, "bake")
	check_eq(va.save_to(path), OK, "first save")
	var old_bytes := FileAccess.get_file_as_bytes(path)
	# Folders where this process's temporary files would go make the write fail (the temporary's
	# name is hidden and numbered per save: .old.res.vat-crowd-save-PID-N.res).
	var blockers := []
	for n in 2000:
		var b := dir + "/.old.res.vat-crowd-save-%d-%d.res" % [OS.get_process_id(), n]
		DirAccess.make_dir_recursive_absolute(b)
		blockers.append(b)
	va.fps = 10.0
	va.bake()
	check(va.save_to(path) != OK, "save over a blocked temporary path fails")
	check_eq(FileAccess.get_file_as_bytes(path), old_bytes, "old file is untouched")
	for b in blockers:
		DirAccess.remove_absolute(b)
	var left := DirAccess.get_files_at(dir)
	check_eq(left, PackedStringArray(["old.res"]), "no temporary file is left")
	DirAccess.remove_absolute(path)


func test_out_of_range_queries() -> void:
	var va := VertexAnimation.new()
	va.source_scene = _box_character()
	va.bake()
	check_eq(va.find_clip("idle"), 0, "find_clip")
	check_eq(va.find_clip("nope"), -1, "unknown clip is -1")
	check_eq(va.get_clip_frame_count(5), 0, "out-of-range clip gives 0")
	check_eq(va.decode_frame(0, 999).size(), 0, "out-of-range frame gives nothing")


func test_too_many_variations_are_refused_before_baking() -> void:
	# 3,000 layers is past every renderer's Texture2DArray limit (2048 on desktop GPUs).
	var tex := ImageTexture.create_from_image(Image.create_empty(2, 2, false, Image.FORMAT_RGBA8))
	var many: Array[Texture2D] = []
	for i in 3000:
		many.append(tex)
	var va := VertexAnimation.new()
	va.source_scene = _box_character(true, ["idle"])
	va.texture_variations = many
	check_eq(va.bake(), FAILED, "3,000 variations are refused")
	check(not va.is_baked(), "nothing baked")
	many.resize(4)
	va.texture_variations = many
	check_eq(va.bake(), OK, "4 variations bake")
	check_eq(va.variations.get_layers(), 4, "into 4 layers")
