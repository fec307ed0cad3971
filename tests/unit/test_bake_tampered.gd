# A baked VertexAnimation whose stored fields were tampered with (by a script, a hand-edited
# .tres or an older file) is reported once with what is wrong, drawn as nothing, and never panics:
# queries return empty values and crowd nodes refuse it with an error.
extends VatTest

const QUIRKY := "res://generated/quirky.tscn"
const Errors := preload("res://unit/test_crowd_errors_lib.gd")
var _errors: Errors


func before_all() -> void:
	QuirkyCharacter.save(QUIRKY)
	_errors = Errors.new()


func after_all() -> void:
	_errors.stop()


func _baked(storage := VertexAnimation.STORAGE_VERTICES) -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = load(QUIRKY)
	va.clips = PackedStringArray(["Walk", "Wave"])
	va.storage = storage
	check_eq(va.bake(), OK, "the character bakes")
	check_eq(va.baked_storage, storage, "in the storage asked for")
	return va


func _tampers() -> Dictionary:
	var small := ImageTexture.create_from_image(Image.create_empty(4, 4, false, Image.FORMAT_RGH))
	return {
		"clip_bounds_table empty": func(va: VertexAnimation) -> void: va.clip_bounds_table = PackedFloat32Array(),
		"frame_count 5": func(va: VertexAnimation) -> void: va.frame_count = 5,
		"frame_count 0": func(va: VertexAnimation) -> void: va.frame_count = 0,
		"clip_table past the end": func(va: VertexAnimation) -> void:
			var t := va.clip_table
			t[5] = 1000.0
			va.clip_table = t,
		"4x4 normal_texture": func(va: VertexAnimation) -> void: va.normal_texture = small,
		"vertex_count 99999999": func(va: VertexAnimation) -> void: va.vertex_count = 99999999,
		"vertex_count -5": func(va: VertexAnimation) -> void: va.vertex_count = -5,
		"encoding_scale NaN": func(va: VertexAnimation) -> void: va.encoding_scale = Vector3(NAN, 1, 1),
		"baked_precision 7": func(va: VertexAnimation) -> void: va.baked_precision = 7,
		"column_channel 9": func(va: VertexAnimation) -> void: va.column_channel = 9,
		"baked_storage 5": func(va: VertexAnimation) -> void: va.baked_storage = 5,
	}


## Tampers that only a bone bake reads.
func _bone_tampers() -> Dictionary:
	var small := ImageTexture.create_from_image(Image.create_empty(4, 4, false, Image.FORMAT_RGBAF))
	return {
		"4x4 bone_texture": func(va: VertexAnimation) -> void: va.bone_texture = small,
		"no skin_texture": func(va: VertexAnimation) -> void: va.skin_texture = null,
		"4x4 skin_texture": func(va: VertexAnimation) -> void: va.skin_texture = small,
		"bone_count 0": func(va: VertexAnimation) -> void: va.bone_count = 0,
		"bone_count +1": func(va: VertexAnimation) -> void: va.bone_count += 1,
		"bone_influences 3": func(va: VertexAnimation) -> void: va._set_bone_influences(3),
		"baked_storage 0": func(va: VertexAnimation) -> void: va.baked_storage = 0,
	}


func test_tampered_bakes_are_refused_without_panics() -> void:
	var tampers := {}
	for what: String in _tampers():
		tampers["vertices, " + what] = [VertexAnimation.STORAGE_VERTICES, _tampers()[what]]
		tampers["bones, " + what] = [VertexAnimation.STORAGE_BONES, _tampers()[what]]
	for what: String in _bone_tampers():
		tampers["bones, " + what] = [VertexAnimation.STORAGE_BONES, _bone_tampers()[what]]
	for what: String in tampers:
		var va := _baked(tampers[what][0])
		_errors.take()
		tampers[what][1].call(va)
		check(not va.is_baked(), "%s: no longer counts as baked" % what)
		va.is_baked()
		check_eq(va.decode_frame(0, 0).size(), 0, "%s: decode_frame gives nothing" % what)
		va.decode_frame_normals(0, 1)
		va.get_clip_bounds(0)
		va.get_clip_bounds(1)
		va.get_frame_time(0, 3)
		var crowd := AnimatedMeshInstance.new()
		crowd.animation = va
		root.add_child(crowd)
		crowd.add_instance(Transform3D.IDENTITY, 0)
		crowd.submit()
		var actors := AnimatedActorMeshInstance.new()
		actors.models = [va] as Array[VertexAnimation]
		root.add_child(actors)
		actors.begin()
		actors.add_actor(Transform3D.IDENTITY, 0, 0.0, 1.0)
		actors.add_model(0, 0, Color.WHITE)
		actors.submit()
		await frames(1)
		crowd.free()
		actors.free()
		var lines := _errors.take()
		if _errors.available():
			var reports := 0
			for l in lines:
				check(not l.contains("[panic"), "%s: no panic (%s)" % [what, l])
				if l.contains("inconsistent bake"):
					reports += 1
			check_eq(reports, 1, "%s: the problem is reported once (%s)" % [what, "; ".join(lines).left(600)])


func test_decode_follows_a_replaced_texture() -> void:
	var a := _baked()
	var b := VertexAnimation.new()
	b.source_scene = load(QUIRKY)
	b.clips = PackedStringArray(["Walk", "Wave"])
	b.storage = VertexAnimation.STORAGE_VERTICES
	b.precision = 1
	check_eq(b.bake(), OK, "a float bake of the same clips")
	var before := a.decode_frame(0, 10)
	# Swap in the other bake's textures and encoding: decode must read the new ones.
	a.position_texture = b.position_texture
	a.normal_texture = b.normal_texture
	a.baked_precision = b.baked_precision
	a.encoding_offset = b.encoding_offset
	a.encoding_scale = b.encoding_scale
	check_eq(a.decode_frame(0, 10), b.decode_frame(0, 10), "decode_frame reads the replaced texture")
	check(before != a.decode_frame(0, 10), "which differs from the half-precision one it had")


func test_save_keeps_unrelated_files_and_leaves_no_temporary() -> void:
	var dir := "user://save_names"
	DirAccess.make_dir_recursive_absolute(ProjectSettings.globalize_path(dir))
	var other := FileAccess.open(dir.path_join("keep.tmp.res"), FileAccess.WRITE)
	other.store_string("a user's own file")
	other.close()
	var va := _baked()
	check_eq(va.save_to(dir.path_join("keep.res")), OK, "saves")
	check_eq(FileAccess.get_file_as_string(dir.path_join("keep.tmp.res")), "a user's own file", "keep.tmp.res is untouched")
	var left := []
	for f in DirAccess.get_files_at(dir):
		if f.contains("vat-crowd-save"):
			left.append(f)
	check_eq(left, [], "no temporary file is left")
	var loaded := ResourceLoader.load(dir.path_join("keep.res"), "", ResourceLoader.CACHE_MODE_IGNORE) as VertexAnimation
	check(loaded != null and loaded.is_baked(), "the saved file loads baked")
