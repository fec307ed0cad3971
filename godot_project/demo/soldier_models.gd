## Bakes the demo soldier into three VertexAnimation models (body, sword, shield) from the same skeleton and
## clips, so one AnimatedActorMeshInstance actor carries all three (in bone storage the sword and shield draw with
## the body's bone texture: `bone_source`); caches the baked resources in
## user://vat_cache/ so later runs load them instead of baking again.
extends RefCounted

const CACHE_DIR := "user://vat_cache"
## Bump when the demo changes what it bakes; the key also holds the scene's and the library's modified times.
const CACHE_VERSION := 2
const FPS := 30.0
## Node names inside the soldier scene, in model order (the crowd nodes use these indices).
const MODEL_NODES: Array[String] = ["Body", "Sword", "Shield"]
const BODY := 0
const VARIATION_COUNT := 4
const LIBRARY := "res://addons/vat_crowd/bin/libvat_gdext.linux.x86_64.so"

## Baked models, in MODEL_NODES order.
var models: Array[VertexAnimation] = []
## What went wrong, for the overlay, when load_or_bake() fails.
var error := ""
## True if at least one model was baked in this run (not loaded from the cache).
var baked := false
## Wall time of load_or_bake().
var elapsed_ms := 0.0


## Loads the models from the cache, or bakes and caches them, in `storage` (VertexAnimation.storage; the
## default Auto is what the demo ships). Returns OK or an error (see `error`).
func load_or_bake(scene_path: String, storage := 2) -> Error:
	var t0 := Time.get_ticks_usec()
	var packed := load(scene_path) as PackedScene
	if packed == null:
		error = "cannot load %s (generate the soldier with `cargo xtask build`)" % scene_path
		return ERR_FILE_NOT_FOUND
	var paths := _mesh_paths(packed)
	if paths.is_empty():
		return ERR_DOES_NOT_EXIST
	var variations := _load_variations(scene_path.get_base_dir())
	var key := "soldier_%d_%d_v%d_s%d" % [FileAccess.get_modified_time(scene_path),
		FileAccess.get_modified_time(LIBRARY), CACHE_VERSION, storage]
	DirAccess.make_dir_recursive_absolute(CACHE_DIR)
	models.clear()
	for m in MODEL_NODES.size():
		var file := "%s/%s_%s.res" % [CACHE_DIR, key, MODEL_NODES[m].to_lower()]
		var va := _load_cached(file)
		if va == null:
			va = VertexAnimation.new()
			va.source_scene = packed
			va.fps = FPS
			va.storage = storage
			var meshes: Array[NodePath] = [paths[m]]
			va.meshes = meshes
			if m == BODY:
				va.texture_variations = variations
			elif storage != 0 and models[BODY].baked_storage == 1:
				# The sword and shield hang on the body's hand bones: they draw with the body's bone
				# texture, storing none of their own.
				va.bone_source = models[BODY]
			var err := va.bake()
			if err != OK:
				error = "baking %s from %s failed (%s); see the error above" % [paths[m], scene_path, error_string(err)]
				return err
			baked = true
			_save(va, file)
		models.append(va)
	_prune_cache(key)
	elapsed_ms = (Time.get_ticks_usec() - t0) / 1000.0
	return OK


## Writes `va` to `file` through a temporary file, so an interrupted run never leaves a half-written cache.
## (ResourceSaver directly: VertexAnimation.save_to() panics in this build, "Gd<T>::bind() failed, already bound".)
func _save(va: VertexAnimation, file: String) -> void:
	var tmp := file.get_basename() + ".tmp.res"
	var err := ResourceSaver.save(va, tmp)
	if err == OK:
		err = DirAccess.rename_absolute(tmp, file)
	if err == OK:
		# Models saved after this one (the sword and shield, whose bone_source it is) refer to it by this path.
		va.take_over_path(file)
	if err != OK:
		DirAccess.remove_absolute(tmp)
		push_warning("demo: could not cache %s (%s); the next run bakes again" % [file, error_string(err)])


func _load_cached(file: String) -> VertexAnimation:
	if not FileAccess.file_exists(file):
		return null
	# Cached by path, so the sword's and shield's bone_source is the body loaded here, not a second copy.
	var va := ResourceLoader.load(file) as VertexAnimation
	if va == null or not va.is_baked():
		push_warning("demo: cached %s is unreadable; baking again" % file)
		return null
	return va


func _mesh_paths(packed: PackedScene) -> Array[NodePath]:
	var probe := packed.instantiate()
	var paths: Array[NodePath] = []
	for node_name in MODEL_NODES:
		var node := probe.find_child(node_name, true, false)
		if not node is MeshInstance3D:
			error = "the soldier scene has no MeshInstance3D named '%s'" % node_name
			paths.clear()
			break
		paths.append(probe.get_path_to(node))
	probe.free()
	return paths


func _load_variations(dir: String) -> Array[Texture2D]:
	var out: Array[Texture2D] = []
	for i in VARIATION_COUNT:
		var path := "%s/variation_%d.tres" % [dir, i]
		var tex: Texture2D = null
		if ResourceLoader.exists(path):
			tex = load(path) as Texture2D
		if tex == null:
			push_warning("demo: %s is missing; the armies differ by tint only" % path)
			return []
		out.append(tex)
	return out


## Removes cache files of older keys so the folder does not grow with every rebuild.
func _prune_cache(key: String) -> void:
	var dir := DirAccess.open(CACHE_DIR)
	if dir == null:
		return
	for f in dir.get_files():
		if f.ends_with(".res") and not f.begins_with(key + "_"):
			dir.remove(f)
