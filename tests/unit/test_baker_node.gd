# VertexAnimationBaker: a character under it, one target per model, saved to an output folder.
extends VatTest

const SOLDIER := "res://generated/soldier.tscn"


func test_bakes_every_target_and_saves_them() -> void:
	var baker := VertexAnimationBaker.new()
	baker.add_child((load(SOLDIER) as PackedScene).instantiate())
	root.add_child(baker)
	var body := VertexAnimation.new()
	body.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	var shield := VertexAnimation.new()
	shield.meshes = [NodePath("Skeleton/Shield")] as Array[NodePath]
	baker.targets = [body, shield] as Array[VertexAnimation]
	var dir := "user://baker_out"
	DirAccess.make_dir_recursive_absolute(dir)
	baker.output_path = dir
	var progress := []
	baker.bake_progress.connect(func(done, total): progress.append([done, total]))
	check_eq(baker.bake(), OK, "baker bakes")
	check_eq(progress, [[1, 2], [2, 2]], "progress per target")
	check(body.is_baked() and shield.is_baked(), "both targets baked")
	check_eq(body.get_clip_names(), shield.get_clip_names(), "same clip table from the same skeleton")
	check(body.vertex_count > shield.vertex_count, "subsets bake their own meshes")
	for i in 2:
		var path := "%s/Soldier_%d.res" % [dir, i]
		check(FileAccess.file_exists(path), "saved " + path)
		DirAccess.remove_absolute(path)


func test_without_a_character_fails_clearly() -> void:
	var baker := VertexAnimationBaker.new()
	root.add_child(baker)
	baker.targets = [VertexAnimation.new()] as Array[VertexAnimation]
	check_eq(baker.bake(), FAILED, "no character under the baker")
