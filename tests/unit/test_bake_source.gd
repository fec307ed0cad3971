# A baked VertexAnimation keeps its source scene by path, uid and md5, never as a load
# dependency: it loads and plays where the source was moved or deleted, and says so.
extends VatTest

const DIR := "user://bake_source"


func _clean() -> void:
	var abs := ProjectSettings.globalize_path(DIR)
	for f in DirAccess.get_files_at(DIR):
		DirAccess.remove_absolute(abs.path_join(f))
	DirAccess.remove_absolute(abs)


## A bake of the soldier's body from a copy of its scene in DIR, saved there; returns the
## paths [scene, baked].
func _bake_from_a_copy() -> Array:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DIR))
	var scene_path := DIR.path_join("soldier_copy.tscn")
	check_eq(ResourceSaver.save(load("res://generated/soldier.tscn"), scene_path), OK, "copy the source")
	var va := VertexAnimation.new()
	va.source_scene = load(scene_path)
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.lod_enabled = false
	check_eq(va.bake(), OK, "bake")
	var res_path := DIR.path_join("soldier_copy.res")
	check_eq(va.save_to(res_path), OK, "save the bake")
	return [scene_path, res_path]


func test_a_bake_does_not_depend_on_its_source() -> void:
	var paths := _bake_from_a_copy()
	# (The soldier's texture_variations are still dependencies: they are inputs kept as they are.)
	var deps := ResourceLoader.get_dependencies(paths[1])
	check(not Array(deps).any(func(d): return paths[0] in d or "soldier" in d.get_file()),
		"the saved bake does not name its source as a dependency: %s" % [deps])
	var back: VertexAnimation = ResourceLoader.load(paths[1], "", ResourceLoader.CACHE_MODE_IGNORE)
	check(back.source_scene != null and back.source_scene.resource_path == paths[0],
		"the source is found again by its path: %s" % [back.source_scene])
	check_eq(back.get_bake_warnings(), PackedStringArray(), "a fresh bake with its source: no warning")
	_clean()


func test_a_bake_whose_source_is_gone_loads_plays_and_warns() -> void:
	var paths := _bake_from_a_copy()
	# Gone: no file, and nothing left in the resource cache that would stand for it.
	check_eq(DirAccess.remove_absolute(ProjectSettings.globalize_path(paths[0])), OK, "delete the source")
	check(not ResourceLoader.exists(paths[0]), "the source is gone")
	var back: VertexAnimation = ResourceLoader.load(paths[1], "", ResourceLoader.CACHE_MODE_IGNORE)
	check(back != null and back.is_baked(), "the bake loads without its source")
	check(back.source_scene == null, "source_scene is empty while its file is gone")
	var w := back.get_bake_warnings()
	check(w.size() == 1 and w[0].begins_with("The source is missing") and paths[0] in w[0],
		"the inspector says the source is missing and where it was: %s" % [w])
	var crowd := AnimatedMeshInstance.new()
	crowd.animation = back
	root.add_child(crowd)
	check(crowd.add_instance(Transform3D.IDENTITY, 0) >= 0, "a crowd plays it")
	crowd.submit()
	check_eq(back.bake(), FAILED, "baking again without the source fails with an error")
	check(back.is_baked(), "and keeps the bake")
	_clean()


func test_a_scene_without_a_file_is_kept_inside() -> void:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DIR))
	var packed := PackedScene.new()
	var character: Node = load("res://generated/soldier.tscn").instantiate()
	check_eq(packed.pack(character), OK, "pack a scene in memory")
	character.free()
	var va := VertexAnimation.new()
	va.source_scene = packed
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.lod_enabled = false
	check_eq(va.bake(), OK, "bake from a scene without a file")
	var res_path := DIR.path_join("in_memory.res")
	check_eq(va.save_to(res_path), OK, "save")
	var back: VertexAnimation = ResourceLoader.load(res_path, "", ResourceLoader.CACHE_MODE_IGNORE)
	check(back.source_scene != null, "the scene was saved inside the bake")
	check_eq(back.get_bake_warnings(), PackedStringArray(), "no warning")
	check_eq(back.bake(), OK, "it bakes again from the kept scene")
	_clean()


func test_texture_variations_are_kept_by_file_too() -> void:
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(DIR))
	var img := Image.create(8, 8, false, Image.FORMAT_RGBA8)
	img.fill(Color(0.2, 0.4, 0.9))
	var tex_path := DIR.path_join("team_blue.tres")
	check_eq(ResourceSaver.save(ImageTexture.create_from_image(img), tex_path), OK, "save a variation texture")
	var in_memory := ImageTexture.create_from_image(img)
	var res_path := DIR.path_join("with_variations.res")
	if true:
		var va := VertexAnimation.new()
		va.source_scene = load("res://generated/soldier.tscn")
		va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
		va.lod_enabled = false
		va.texture_variations = [load(tex_path), in_memory] as Array[Texture2D]
		check_eq(va.bake(), OK, "bake with two variations")
		check_eq(va.save_to(res_path), OK, "save")
	var deps := ResourceLoader.get_dependencies(res_path)
	check(not Array(deps).any(func(d): return "team_blue" in d), "a variation's file is no dependency: %s" % [deps])
	var back: VertexAnimation = ResourceLoader.load(res_path, "", ResourceLoader.CACHE_MODE_IGNORE)
	check_eq(back.texture_variations.size(), 2, "both variations come back")
	check(back.texture_variations[0] != null and back.texture_variations[0].resource_path == tex_path,
		"the one with a file is found by its path")
	check(back.texture_variations[1] != null and back.texture_variations[1].get_width() == 8,
		"the one without a file was kept inside")
	back = null
	# Gone: the file deleted, nothing left in the resource cache that would stand for it.
	check_eq(DirAccess.remove_absolute(ProjectSettings.globalize_path(tex_path)), OK, "delete the variation's file")
	back = ResourceLoader.load(res_path, "", ResourceLoader.CACHE_MODE_IGNORE)
	check(back != null and back.is_baked(), "the bake loads without the variation's file")
	check_eq(back.variations.get_layers(), 2, "and keeps its baked variations")
	check(back.texture_variations[0] == null, "the missing variation reads null")
	var w := back.get_bake_warnings()
	check(w.size() == 1 and w[0].begins_with("Texture variations are missing") and "team_blue" in w[0],
		"the inspector says which variation is missing: %s" % [w])
	check_eq(back.bake(), FAILED, "baking again without it fails with an error")
	_clean()
