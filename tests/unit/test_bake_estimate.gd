# What the inspector shows before a bake, checked against the bake itself: the estimated texture
# bytes (in the storage Auto picked) against the baked textures' own image data (every shared character and the soldier), and
# the source's clip list against the scene's AnimationPlayer.
extends VatTest

## Clips baked per character (the estimate must follow the clip selection).
const CLIPS := 3


func _characters() -> Array:
	var out := []
	for f in DirAccess.get_files_at("res://assets_local"):
		if f.get_extension().to_lower() in ["glb", "gltf"]:
			out.append("res://assets_local/".path_join(f))
	out.sort()
	out.append("res://generated/soldier.tscn")
	return out


## Bytes of the textures as Godot holds them.
func _texture_bytes(va: VertexAnimation) -> int:
	var bytes := 0
	for t: ImageTexture in [va.position_texture, va.normal_texture, va.bone_texture, va.skin_texture]:
		if t != null:
			bytes += t.get_image().get_data().size()
	return bytes


func test_estimate_matches_the_baked_textures() -> void:
	var characters := _characters()
	if characters.size() == 1:
		var why := "no character in res://assets_local (../shared/assets or $VAT_CROWD_ASSETS)"
		if in_ci():
			fail(why)
		else:
			print("    note: " + why)
	for path: String in characters:
		var scene: PackedScene = load(path)
		var va := VertexAnimation.new()
		va.source_scene = scene
		var names := va.get_source_clip_names()
		check_eq(names, scene_clips(scene), "%s: the source's clips" % path)
		va.clips = names.slice(0, CLIPS)
		va.lod_enabled = false
		va.precision = 1 if path.ends_with("soldier.tscn") else 0
		var e := va.estimate_bake()
		if not check(not e.has("error"), "%s: estimate: %s" % [path, e.get("error", "")]):
			continue
		check_eq(va.bake(), OK, "%s bakes" % path)
		print("    %s: estimate %d bytes in vertex storage, %d in bone storage, %d vertices x %d frames; baked in %s storage" % [
			path.get_file(), e["bytes"], e["bone_bytes"], e["vertices"], e["frames"], va.get_bake_stats()["storage"]])
		var bones := va.baked_storage == VertexAnimation.STORAGE_BONES
		if bones:
			# Before sampling the estimate cannot know which transforms move alike (meshes on one
			# bone attachment): an upper bound, close.
			var got := _texture_bytes(va)
			check(e["bone_bytes"] >= got and e["bone_bytes"] <= got * 1.05, "%s: estimated bone bytes %d bound the textures' %d within 5%%" % [path, e["bone_bytes"], got])
		else:
			check_eq(e["bytes"], _texture_bytes(va), "%s: estimated bytes = the textures' bytes" % path)
		check_eq(e["bytes"], va.get_bake_stats()["bytes"], "%s: estimated vertex-storage bytes = the bake's" % path)
		if bones:
			check(e["bone_bytes"] * 4 <= e["bytes"], "%s: Auto picked bones where they are at least 4x smaller" % path)
		check_eq(e["vertices"], va.vertex_count, "%s: estimated vertices" % path)
		check_eq(e["frames"], va.frame_count, "%s: estimated frames" % path)
		check_eq(e["clips"], va.get_clip_count(), "%s: estimated clips" % path)


func test_estimate_with_lod_bounds_the_bake() -> void:
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn")
	va.clips = PackedStringArray(["walk", "idle"])
	var e := va.estimate_bake()
	check_eq(va.bake(), OK, "bake with LOD")
	var stats := va.get_bake_stats()
	check(not (stats["lods"] as Array).is_empty(), "the bake built levels")
	check_eq(e["bytes"], stats["vat_bytes_before"], "the estimate is the bake's size before LOD")
	check(_texture_bytes(va) < e["bytes"], "LOD's textures are smaller than the estimate")


func test_estimate_reports_what_cannot_bake() -> void:
	var va := VertexAnimation.new()
	check(va.estimate_bake().has("error"), "no source: an error text")
	va.source_scene = load("res://generated/soldier.tscn")
	va.clips = PackedStringArray(["nope"])
	var e := va.estimate_bake()
	check("nope" in str(e.get("error", "")), "an unknown clip is named: %s" % e)
	check_eq(VertexAnimation.new().get_source_clip_names(), PackedStringArray(), "no source: no clips")
