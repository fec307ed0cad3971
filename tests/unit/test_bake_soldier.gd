# Baking the generated soldier headless: clip table, sampling convention, determinism, round trip.
extends VatTest

const SOLDIER := "res://generated/soldier.tscn"


func _soldier() -> PackedScene:
	return load(SOLDIER) as PackedScene


func test_clip_table_follows_the_sampling_convention() -> void:
	var scene := _soldier()
	if scene == null:
		fail("missing " + SOLDIER + " (cargo xtask build generates it)")
		return
	var va := VertexAnimation.new()
	va.source_scene = scene
	check_eq(va.bake(), OK, "soldier bakes")
	var instance := scene.instantiate()
	var player: AnimationPlayer = instance.find_child("AnimationPlayer")
	var total := 0
	for c in va.get_clip_count():
		var name: String = va.get_clip_names()[c]
		var anim := player.get_animation(name)
		var n := maxi(1, roundi(anim.length * 30.0))
		var looped := anim.loop_mode != Animation.LOOP_NONE
		check_eq(va.is_clip_looped(c), looped, name + " loop flag")
		check_eq(va.get_clip_frame_count(c), n if looped else n + 1, name + " frame count")
		check_eq(va.get_clip_first_frame(c), total, name + " first frame")
		check_near(va.get_frame_time(c, 0), 0.0, 1e-6, name + " first frame at 0")
		if not looped:
			check_near(va.get_frame_time(c, n), anim.length, 1e-5, name + " last frame at the clip end")
		else:
			check_near(va.get_frame_time(c, n - 1), anim.length * (n - 1) / n, 1e-5, name + " no duplicate frame at the wrap")
		total += va.get_clip_frame_count(c)
	instance.free()
	check_eq(va.frame_count, total, "frame_count sums the clips")
	check(va.get_bounds().size.y > 1.0, "bounds cover a standing soldier")


func test_bake_twice_is_byte_identical() -> void:
	for storage in [VertexAnimation.STORAGE_VERTICES, VertexAnimation.STORAGE_BONES]:
		var a := VertexAnimation.new()
		a.source_scene = _soldier()
		a.storage = storage
		var b := VertexAnimation.new()
		b.source_scene = _soldier()
		b.storage = storage
		check_eq(a.bake(), OK, "first")
		check_eq(b.bake(), OK, "second")
		check_eq(a.baked_storage, storage, "baked in the storage asked for")
		var textures := ["position_texture", "normal_texture"] if storage == VertexAnimation.STORAGE_VERTICES else ["bone_texture", "skin_texture"]
		for t: String in textures:
			check(a.get(t).get_image().get_data() == b.get(t).get_image().get_data(), "%s identical" % t)


func test_saved_resource_round_trips() -> void:
	var va := VertexAnimation.new()
	va.source_scene = _soldier()
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	check_eq(va.bake(), OK, "body only bakes")
	var path := "user://soldier_body.res"
	check_eq(va.save_to(path), OK, "save")
	var loaded = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	check(loaded != null and loaded.is_baked(), "loads baked")
	check_eq(loaded.vertex_count, va.vertex_count, "vertex count")
	check_eq(loaded.get_clip_names(), va.get_clip_names(), "clips")
	check_eq(loaded.decode_frame(1, 3), va.decode_frame(1, 3), "decoded frame identical after save/load")
	var body: MeshInstance3D = _soldier().instantiate().get_node("Skeleton/Body")
	check_eq(loaded.mesh.get_surface_count(), body.mesh.get_surface_count(), "body keeps its surfaces")
	body.get_parent().get_parent().free()
	DirAccess.remove_absolute(path)


## The bake says which clips move too fast for their rate: the attack's sword swing at 30 fps
## strays half-way between frames by more than 1% of the diagonal; at 60 fps by a quarter of
## that, and the summary no longer names it.
func test_fast_clips_are_named_with_the_rate_they_need() -> void:
	var va := VertexAnimation.new()
	va.source_scene = _soldier()
	va.lod_enabled = false
	check_eq(va.bake(), OK, "soldier bakes")
	var sags: PackedFloat32Array = va.get_bake_stats()["clip_sag"]
	check_eq(sags.size(), va.get_clip_count(), "one sag per clip")
	var attack := va.find_clip("attack")
	var idle := va.find_clip("idle")
	print("    attack sag %.4f, idle %.4f of the diagonal" % [sags[attack], sags[idle]])
	check(sags[attack] > 0.01, "the attack's swing sags past 1%% at 30 fps (%.4f)" % sags[attack])
	check(sags[idle] < 0.01, "idle does not (%.4f)" % sags[idle])
	var summary: String = va.get_bake_stats()["summary"]
	check(summary.contains("'attack'"), "the summary names the attack: " + summary)
	check(not summary.contains("'idle'"), "and not idle")
	va.clip_fps = {"attack": 60.0}
	check_eq(va.bake(), OK, "soldier bakes with the attack at 60 fps")
	var faster: float = va.get_bake_stats()["clip_sag"][va.find_clip("attack")]
	print("    attack at 60 fps: %.4f" % faster)
	check(faster > sags[attack] / 5.0 and faster < sags[attack] / 3.0, "twice the rate, about a quarter of the sag (%.4f against %.4f)" % [faster, sags[attack]])
	check(faster < 0.01 and not va.get_bake_stats()["summary"].contains("'attack'"), "at 60 fps the attack is not named")
