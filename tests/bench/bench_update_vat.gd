## The vat_crowd paths of bench_update.gd, statically typed as a user's script would be (typed calls are the
## fast ones in GDScript). Loaded only when the extension's classes exist, so bench_update.gd itself still parses
## and measures the baselines without them.
extends RefCounted

const Util := preload("res://bench/bench_util.gd")

## Node names of the three models inside the generated soldier.
const MODEL_NODES := ["Body", "Sword", "Shield"]

var models: Array[VertexAnimation] = []
var crowd: AnimatedActorMeshInstance
## vat_gpu_nodes: the crowd split over several nodes (one per unit type in a game), and each node's share of the
## two input sets.
var crowds: Array[AnimatedActorMeshInstance] = []
var _parts: Array = []


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


## The looped clips (idle, walk, run...): what most of a battle's actors play between clip changes.
func looped_clips() -> PackedInt32Array:
	var out := PackedInt32Array()
	for c in clip_count():
		if models[0].is_clip_looped(c):
			out.append(c)
	return out


## A fresh crowd node under `parent` with the three models (body, sword, shield), drawn by the GPU-driven frame
## when `gpu_driven` (the default where the renderer has compute) or by the CPU frame.
func make_crowd(parent: Node, gpu_driven := false) -> void:
	crowd = AnimatedActorMeshInstance.new()
	crowd.name = "BenchCrowd"
	crowd.gpu_driven = gpu_driven
	crowd.models = models
	parent.add_child(crowd)
	# vat_immediate_equipped's two loadouts: body, sword and shield; body and sword.
	crowd.set_equipment(0, PackedInt32Array([0, 1, 2]))
	crowd.set_equipment(1, PackedInt32Array([0, 1]))


func free_crowd() -> void:
	if crowd != null:
		crowd.queue_free()
		crowd = null
	for c in crowds:
		c.queue_free()
	crowds.clear()
	_parts.clear()


## vat_gpu_nodes: `count` crowd nodes drawn by the GPU-driven frame, each given an equal slice of the `sets`'
## actors (in order) and the changers among them, renumbered from 0.
func make_crowds(parent: Node, count: int, sets: Array, changers: PackedInt32Array) -> void:
	var n: int = sets[0].placements.size()
	for k in count:
		make_crowd(parent, true)
		crowds.append(crowd)
		crowd = null
		var lo := n * k / count
		var hi := n * (k + 1) / count
		var per_set := []
		for s: Dictionary in sets:
			var part := {"placements": s.placements.slice(lo, hi), "positions": s.positions.slice(lo, hi),
				"yaws": s.yaws.slice(lo, hi), "clips": s.clips.slice(lo, hi), "starts": s.starts.slice(lo, hi)}
			var ids := PackedInt32Array()
			var shields := PackedInt32Array()
			for i in hi - lo:
				ids.append(i)
				if (lo + i) % 3 != 2:
					shields.append(i)
			part.ids = ids
			part.shield_ids = shields
			for key in ["changers", "changer_clips", "changer_starts", "prev_clips", "prev_starts", "blend_times"]:
				part[key] = PackedInt32Array() if key in ["changers", "changer_clips", "prev_clips"] else PackedFloat32Array()
			for j in changers.size():
				var i := changers[j]
				if i >= lo and i < hi:
					part.changers.append(i - lo)
					for key in ["changer_clips", "changer_starts", "prev_clips", "prev_starts", "blend_times"]:
						part[key].append(s[key][j])
			per_set.append(part)
		_parts.append(per_set)


## vat_gpu_nodes: vat_bulk's frame on every node, each with its share.
func push_moves_nodes(s: int) -> void:
	for k in crowds.size():
		var part: Dictionary = _parts[k][s]
		var c := crowds[k]
		var placements: PackedVector4Array = part.placements
		if c.get_actor_count() != placements.size():
			c.set_actors(part.positions, part.yaws, part.clips, part.starts)
			c.set_model_actors(0, part.ids)
			c.set_model_actors(1, part.ids)
			c.set_model_actors(2, part.shield_ids)
		else:
			c.set_actor_placements(placements)
			c.set_actor_clips(part.changers, part.changer_clips, part.changer_starts)
		c.set_actor_blends(part.changers, part.prev_clips, part.prev_starts, part.blend_times)
		c.submit()


## vat_bulk, the battle frame as a game sends it with the bulk calls: the crowd's actors and model lists are set
## once (the first, unmeasured frame); each frame then moves every actor from one PackedVector4Array (x, y, z, yaw,
## the placement's own layout), switches the changers' clips and cross-fades them, and submits.
func push_moves(set_s: Dictionary, ids: PackedInt32Array, shield_ids: PackedInt32Array,
		changers: PackedInt32Array) -> void:
	var c := crowd
	var placements: PackedVector4Array = set_s.placements
	if c.get_actor_count() != placements.size():
		c.set_actors(set_s.positions, set_s.yaws, set_s.clips, set_s.starts)
		c.set_model_actors(0, ids)
		c.set_model_actors(1, ids)
		c.set_model_actors(2, shield_ids)
	else:
		c.set_actor_placements(placements)
		c.set_actor_clips(changers, set_s.changer_clips, set_s.changer_starts)
	c.set_actor_blends(changers, set_s.prev_clips, set_s.prev_starts, set_s.blend_times)
	c.submit()


## vat_set_actors: every actor's placement and clip from precomputed arrays, the changers' cross-fades, the three model
## lists (the same every frame), then one submit. `all_states`: every actor plays another clip than last frame.
func push_battle(set_s: Dictionary, ids: PackedInt32Array, shield_ids: PackedInt32Array,
		changers: PackedInt32Array, all_states: bool) -> void:
	var c := crowd
	if all_states:
		c.set_actors(set_s.positions, set_s.yaws, set_s.clips_all, set_s.starts_all)
	else:
		c.set_actors(set_s.positions, set_s.yaws, set_s.clips, set_s.starts)
		c.set_actor_blends(changers, set_s.prev_clips, set_s.prev_starts, set_s.blend_times)
	c.set_model_actors(0, ids)
	c.set_model_actors(1, ids)
	c.set_model_actors(2, shield_ids)
	c.submit()


## vat_immediate: one add_actor per actor and one add_model per model it carries, from GDScript, the changers'
## cross-fades, then one submit. Every argument is passed, with its exact type: only then does GDScript take its
## fast call path (see docs/performance.md); `defaults` leaves out add_model's optional arguments instead.
func push_immediate(set_s: Dictionary, changers: PackedInt32Array, defaults := false) -> void:
	if defaults:
		_push_immediate_defaults(set_s, changers)
		return
	var c := crowd
	var xforms: Array[Transform3D] = set_s.xforms
	var clips: PackedInt32Array = set_s.clips
	var starts: PackedFloat32Array = set_s.starts
	var prev_clips: PackedInt32Array = set_s.prev_clips
	var prev_starts: PackedFloat32Array = set_s.prev_starts
	var white := Color.WHITE
	var no_custom := Color(0, 0, 0, 0)
	c.begin()
	for i in xforms.size():
		c.add_actor(xforms[i], clips[i], starts[i], 1.0, no_custom)
		c.add_model(0, 0, white)
		c.add_model(1, 0, white)
		if i % 3 != 2:
			c.add_model(2, 0, white)
	for j in changers.size():
		c.set_actor_blend(changers[j], prev_clips[j], prev_starts[j], 0.25)
	c.submit()


## vat_immediate_equipped: one add_equipped_actor per actor (its models from one of two equipment sets defined
## once), the changers' cross-fades, then one submit.
func push_equipped(set_s: Dictionary, changers: PackedInt32Array) -> void:
	var c := crowd
	var xforms: Array[Transform3D] = set_s.xforms
	var clips: PackedInt32Array = set_s.clips
	var starts: PackedFloat32Array = set_s.starts
	var prev_clips: PackedInt32Array = set_s.prev_clips
	var prev_starts: PackedFloat32Array = set_s.prev_starts
	var no_custom := Color(0, 0, 0, 0)
	c.begin()
	for i in xforms.size():
		c.add_equipped_actor(xforms[i], 0 if i % 3 != 2 else 1, clips[i], starts[i], 1.0, no_custom)
	for j in changers.size():
		c.set_actor_blend(changers[j], prev_clips[j], prev_starts[j], 0.25)
	c.submit()


func _push_immediate_defaults(set_s: Dictionary, changers: PackedInt32Array) -> void:
	var c := crowd
	var xforms: Array[Transform3D] = set_s.xforms
	var clips: PackedInt32Array = set_s.clips
	var starts: PackedFloat32Array = set_s.starts
	var prev_clips: PackedInt32Array = set_s.prev_clips
	var prev_starts: PackedFloat32Array = set_s.prev_starts
	c.begin()
	for i in xforms.size():
		c.add_actor(xforms[i], clips[i], starts[i], 1.0)
		c.add_model(0)
		c.add_model(1)
		if i % 3 != 2:
			c.add_model(2)
	for j in changers.size():
		c.set_actor_blend(changers[j], prev_clips[j], prev_starts[j], 0.25)
	c.submit()


func last_submit_ms() -> float:
	var usec := 0
	for c in _nodes():
		usec += c.get_last_submit_usec()
	return usec / 1000.0


## Bytes the last submit uploaded, where the node reports them; else -1.
func last_submit_bytes() -> int:
	var bytes := 0
	for c in _nodes():
		if not c.has_method("get_last_submit_bytes"):
			return -1
		bytes += c.call("get_last_submit_bytes")
	return bytes


## The crowd node, or the nodes of vat_gpu_nodes.
func _nodes() -> Array[AnimatedActorMeshInstance]:
	if crowd == null:
		return crowds
	var one: Array[AnimatedActorMeshInstance] = [crowd]
	return one
