## The vat_crowd paths of bench_update.gd, statically typed as a user's script would be (typed calls are the
## fast ones in GDScript). Loaded only when the extension's classes exist, so bench_update.gd itself still parses
## and measures the baselines without them.
extends RefCounted

const Util := preload("res://bench/bench_util.gd")

## Node names of the three models inside the generated soldier.
const MODEL_NODES := ["Body", "Sword", "Shield"]

var models: Array[VertexAnimation] = []
var crowd: AnimatedActorMeshInstance


## Bakes body, sword and shield from the soldier as three VertexAnimations (one mesh each). Returns OK or the error.
func bake_models(packed: PackedScene, fps: float) -> Error:
	var probe := packed.instantiate()
	var paths: Array[NodePath] = []
	for node_name in MODEL_NODES:
		var node := Util.find_named(probe, node_name)
		if node == null:
			printerr("bench_update: the soldier has no node '%s'" % node_name)
			probe.free()
			return ERR_DOES_NOT_EXIST
		paths.append(probe.get_path_to(node))
	probe.free()
	models.clear()
	for path in paths:
		var va := VertexAnimation.new()
		va.source_scene = packed
		va.fps = fps
		var meshes: Array[NodePath] = [path]
		va.meshes = meshes
		var t0 := Time.get_ticks_usec()
		var err := va.bake()
		if err != OK:
			printerr("bench_update: baking %s failed: %s" % [path, error_string(err)])
			return err
		print("bench_update: baked %s: %d vertices, %d frames, %d clips (%.0f ms)" % [
			path, va.vertex_count, va.frame_count, va.get_clip_count(), (Time.get_ticks_usec() - t0) / 1000.0])
		models.append(va)
	return OK


func clip_count() -> int:
	return models[0].get_clip_count()


## A fresh crowd node under `parent` with the three models, or only the body (what the baselines draw);
## `full` turns on full_transform.
func make_crowd(parent: Node, body_only := false, full := false) -> void:
	crowd = AnimatedActorMeshInstance.new()
	crowd.name = "BenchCrowd"
	crowd.full_transform = full
	var used: Array[VertexAnimation] = models.slice(0, 1) if body_only else models
	crowd.models = used
	parent.add_child(crowd)


func free_crowd() -> void:
	if crowd != null:
		crowd.queue_free()
		crowd = null


## vat_bulk: every actor and each of the crowd's models from precomputed arrays, then one submit.
func push_bulk(positions: PackedVector3Array, yaws: PackedFloat32Array, clips: PackedInt32Array,
		starts: PackedFloat32Array, ids: PackedInt32Array) -> void:
	crowd.set_actors(positions, yaws, clips, starts)
	for m in crowd.models.size():
		crowd.set_model_actors(m, ids)
	crowd.submit()


## vat_bulk_full: every actor's whole 3x4 transform (MultiMesh.buffer layout) and each model, then one submit.
func push_bulk_full(rows: PackedFloat32Array, clips: PackedInt32Array, starts: PackedFloat32Array,
		ids: PackedInt32Array) -> void:
	crowd.set_actor_transforms(rows, clips, starts)
	for m in crowd.models.size():
		crowd.set_model_actors(m, ids)
	crowd.submit()


## vat_immediate: one add_actor and three add_model calls per actor from GDScript, then one submit.
func push_immediate(xforms: Array[Transform3D], clips: PackedInt32Array, starts: PackedFloat32Array) -> void:
	var c := crowd
	c.begin()
	for i in xforms.size():
		c.add_actor(xforms[i], clips[i], starts[i], 1.0)
		c.add_model(0)
		c.add_model(1)
		c.add_model(2)
	c.submit()


func last_submit_ms() -> float:
	return crowd.get_last_submit_usec() / 1000.0
