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


## The largest distance between two bakes' decoded positions over every clip's middle frame.
func _max_distance(a: VertexAnimation, b: VertexAnimation) -> float:
	var worst := 0.0
	for c in a.get_clip_count():
		var pa := a.decode_frame(c, a.get_clip_frame_count(c) / 2)
		var pb := b.decode_frame(c, b.get_clip_frame_count(c) / 2)
		if pa.size() != pb.size():
			return INF
		for i in pa.size():
			worst = maxf(worst, pa[i].distance_to(pb[i]))
	return worst


## A baker over the soldier with `targets` (meshes given by path).
func _soldier_baker(targets: Array[VertexAnimation]) -> VertexAnimationBaker:
	var baker := VertexAnimationBaker.new()
	baker.add_child((load(SOLDIER) as PackedScene).instantiate())
	root.add_child(baker)
	baker.targets = targets
	return baker


func _model(path: String) -> VertexAnimation:
	var va := VertexAnimation.new()
	va.meshes = [NodePath(path)] as Array[NodePath]
	va.lod_enabled = false
	return va


## The baker's later targets draw with the first one's bone texture (`share_bone_textures`, on by
## default): the shield and sword store only their skin tables, name the body as their
## bone_source, and decode where bakes of their own do.
func test_equipment_shares_the_first_targets_bone_texture() -> void:
	var body := _model("Skeleton/Body")
	var shield := _model("Skeleton/Shield")
	var baker := _soldier_baker([body, shield] as Array[VertexAnimation])
	check(baker.share_bone_textures, "sharing is on by default")
	check_eq(baker.bake(), OK, "baker bakes")
	check_eq(body.baked_storage, VertexAnimation.STORAGE_BONES, "the body bakes in bone storage")
	check(body.bone_texture != null, "the body stores its bone texture")
	check_eq(shield.baked_storage, VertexAnimation.STORAGE_BONES, "the shield bakes in bone storage")
	check(shield.bone_texture == null, "the shield stores no bone texture of its own")
	check(shield.bone_source == body, "the shield's bone_source is the body")
	# A bake of the shield alone, with its own bone texture, is where it must decode.
	var own := VertexAnimation.new()
	own.source_scene = load(SOLDIER)
	own.meshes = shield.meshes
	own.lod_enabled = false
	check_eq(own.bake(), OK, "the shield bakes alone")
	check(own.bone_texture != null, "alone, it stores its own bone texture")
	var d := _max_distance(own, shield)
	var diag := own.get_bounds().size.length()
	print("    shield on the body's bones: %.6f of the diagonal from its own bake" % (d / diag))
	check(d <= 2e-3 * diag, "the shared shield decodes within 0.2%% of the diagonal of its own bake (%.6f)" % (d / diag))
	check(shield.get_bake_stats()["texture_bytes"] < own.get_bake_stats()["texture_bytes"], "sharing stores fewer bytes")
	# Off: each stores its own.
	var body2 := _model("Skeleton/Body")
	var shield2 := _model("Skeleton/Shield")
	var baker2 := _soldier_baker([body2, shield2] as Array[VertexAnimation])
	baker2.share_bone_textures = false
	check_eq(baker2.bake(), OK, "baker bakes without sharing")
	check(shield2.bone_texture != null and shield2.bone_source == null, "without sharing the shield keeps its own")


## A target whose bone_source is another target of the same bake draws with that target's new
## bake, whatever the order they are listed in: the body is built (and saved) first.
func test_a_bone_source_baked_in_the_same_run_is_built_first() -> void:
	var body := _model("Skeleton/Body")
	var shield := _model("Skeleton/Shield")
	var baker := _soldier_baker([body, shield] as Array[VertexAnimation])
	check_eq(baker.bake(), OK, "a first bake with every clip")
	# Again with one clip, the shield listed first: built against the body's old bake, it would
	# not fit the body's new one.
	body.clips = PackedStringArray([body.get_clip_names()[0]])
	shield.clips = body.clips
	baker.targets = [shield, body] as Array[VertexAnimation]
	check_eq(baker.bake(), OK, "the second bake, shield first")
	check_eq(body.get_clip_count(), 1, "the body has one clip")
	check(shield.bone_source == body and shield.bone_texture == null, "the shield still draws with the body's bones")
	check_eq(shield.decode_frame(0, 0).size(), shield.vertex_count, "the shield decodes on the body's new bake")
