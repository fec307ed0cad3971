## The battle: four armies of soldiers in formation blocks march at each other across the field (x = 0 is
## where the fronts meet), fight where they meet, and fall.
##
## Cost per frame stays small at 100,000 soldiers because nothing loops over soldiers every frame:
## - each formation block (up to 2,500 soldiers) is one AnimatedActorMeshInstance whose body, sword and shield
##   share one actor record; the block marches by moving its node, so its actor data does not change;
## - clips and start times are written only on state changes (a block halts, fights; a soldier falls), and
##   only a changed block calls set_actors() + set_model_actors() + submit();
## - each crowd node culls its soldiers one by one against the camera (those whose shadows reach the view still
##   cast them) and draws each at the level of detail its distance calls for (AnimatedActorMeshInstance's
##   `culling` and LOD properties, on by default), every frame the camera or the block moves.
extends Node3D

const Models := preload("res://demo/soldier_models.gd")

const SPACING := 1.2  ## metres between neighbours in a block
const BLOCK_COLS := 50  ## soldiers side by side in a block
const BLOCK_SIZE := 2500
const BLOCK_GAP := 8.0  ## metres between blocks side by side
const RUN_SPEED := 3.4  ## m/s of a charging front block
const WALK_SPEED := 1.3  ## m/s of a reserve block
const HALF_GAP := 0.55  ## each front halts this far from the meeting line
const RESERVE_DISTANCE := 12.0  ## a reserve halts this far behind its front block
const ATTACK_RANKS := 2  ## the foremost living ranks of a fighting block attack
const DEATH_RATE := Vector2(2.0, 6.0)  ## deaths per second in a fighting block (random in this range)
## Model yaw that faces +X (the soldier is modelled facing -Z, toes towards -Z; yaw turns about +Y).
const FACE_EAST_YAW := -PI * 0.5
const ARMY_COUNT := 4
## Per army: the shield's tint (the body's colours come from its texture variation).
const ARMY_TINTS: Array[Color] = [
	Color(0.85, 0.2, 0.15), Color(0.95, 0.75, 0.2), Color(0.2, 0.4, 0.9), Color(0.25, 0.7, 0.35)]
const SWORD_TINT := Color(0.9, 0.9, 0.95)

enum State { MARCH, HOLD, FIGHT, HALT }


## One formation block: one crowd node, moved as a whole.
class Block:
	var node: AnimatedActorMeshInstance
	var army := 0
	var side := 0  ## 0: west, marching +X; 1: east, marching -X
	var count := 0
	var rows := 0
	var line := 0  ## 0: front line, 1: reserve
	var dir := 1.0  ## +1 marching +X, -1 marching -X
	var x := 0.0  ## front edge
	var z := 0.0  ## centre
	var positions := PackedVector3Array()  ## relative to the node at (x, 0, z)
	var yaws := PackedFloat32Array()
	var clips := PackedInt32Array()
	var starts := PackedFloat32Array()
	var phase := PackedFloat32Array()  ## per soldier animation offset, so the block does not move in lockstep
	var ids := PackedInt32Array()
	var alive := PackedByteArray()
	var front_row := PackedInt32Array()  ## per column, the foremost living rank
	var state := State.MARCH
	var opponent := -1  ## index of the enemy front block across the meeting line (front line only)
	var front := -1  ## index of the front block ahead of a reserve (indices, not references: no RefCounted cycles)
	var death_rate := 0.0
	var death_debt := 0.0
	var changed := true


var time := 0.0  ## battle time in seconds; also every crowd's clock
var soldiers := 0
var dead := 0
var last_submit_ms := 0.0  ## CPU time of this frame's submits
var last_logic_ms := 0.0  ## CPU time of this frame's battle logic, submits included
var submits := 0  ## blocks submitted this frame

var _models: Array[VertexAnimation] = []
var _blocks: Array[Block] = []
var _clip := {}
var _body_variations := 1
var _rng := RandomNumberGenerator.new()


## Builds `total` soldiers in four armies. `models` are body, sword, shield (Models.MODEL_NODES order).
func setup(models: Array[VertexAnimation], total: int, random_seed := 7) -> void:
	_models = models
	_rng.seed = random_seed
	for clip_name in ["idle", "walk", "run", "attack", "die"]:
		var c := models[0].find_clip(clip_name)
		if c < 0:
			push_error("demo: the soldier has no clip '%s'; using clip 0" % clip_name)
			c = 0
		_clip[clip_name] = c
	var body: VertexAnimation = models[Models.BODY]
	_body_variations = body.variations.get_layers() if body.variations != null else 1
	var per_army := ceili(total / float(ARMY_COUNT))
	for a in ARMY_COUNT:
		_place_army(a, clampi(total - a * per_army, 0, per_army))
	_pair_blocks()
	step(0.0)


## Advances the battle by `dt` seconds and submits the blocks whose soldiers changed.
func step(dt: float) -> void:
	var t0 := Time.get_ticks_usec()
	time += dt
	var submit_usec := 0
	submits = 0
	for b in _blocks:
		_step_block(b, dt)
		b.node.time = time
		b.node.position = Vector3(b.x, 0.0, b.z)
		if b.changed:
			_submit(b)
			submit_usec += b.node.get_last_submit_usec()
			submits += 1
	last_submit_ms = submit_usec / 1000.0
	last_logic_ms = (Time.get_ticks_usec() - t0) / 1000.0


func get_actor_count() -> int:
	var n := 0
	for b in _blocks:
		n += b.node.get_actor_count()
	return n


func get_model_instance_count() -> int:
	var n := 0
	for b in _blocks:
		for m in Models.MODEL_NODES.size():
			n += b.node.get_model_instance_count(m)
	return n


## Actors drawn per level of detail in the last frame, over every block (culled ones not counted).
func get_lod_counts() -> PackedInt32Array:
	var out := PackedInt32Array()
	for b in _blocks:
		var counts: PackedInt32Array = b.node.get_lod_counts()
		if out.size() < counts.size():
			out.resize(counts.size())
		for i in counts.size():
			out[i] += counts[i]
	return out


## Vertices the crowds drew in the view in the last frame (shadow passes not counted).
func get_drawn_vertex_count() -> int:
	var n := 0
	for b in _blocks:
		n += b.node.get_drawn_vertex_count()
	return n


func get_node_count() -> int:
	return _blocks.size()


## A point and size that frame the battle, for the camera: {center: Vector3, width: float}.
func get_overview() -> Dictionary:
	var lo := INF
	var hi := -INF
	for b in _blocks:
		lo = minf(lo, b.z - BLOCK_COLS * SPACING * 0.5)
		hi = maxf(hi, b.z + BLOCK_COLS * SPACING * 0.5)
	return {"center": Vector3(0, 0, 0.5 * (lo + hi)), "width": hi - lo}


func _submit(b: Block) -> void:
	var node := b.node
	node.set_actors(b.positions, b.yaws, b.clips, b.starts)
	node.set_model_actors(Models.BODY, b.ids, b.army % _body_variations, Color.WHITE)
	node.set_model_actors(1, b.ids, 0, SWORD_TINT)
	node.set_model_actors(2, b.ids, 0, ARMY_TINTS[b.army])
	node.submit()
	b.changed = false


# --- layout -----------------------------------------------------------------------------------------------------

## An army's blocks: columns side by side along z (armies 0 and 2 south, 1 and 3 north), two lines deep.
func _place_army(army: int, count: int) -> void:
	var block_count := ceili(count / float(BLOCK_SIZE))
	var columns := ceili(block_count / 2.0)
	var pitch := BLOCK_COLS * SPACING + BLOCK_GAP
	var side := army / 2
	var dir := 1.0 if side == 0 else -1.0
	var left := count
	for i in block_count:
		var b := Block.new()
		b.army = army
		b.side = side
		b.count = mini(BLOCK_SIZE, left)
		left -= b.count
		b.rows = ceili(b.count / float(BLOCK_COLS))
		b.line = i / columns
		b.dir = dir
		var column := (army % 2) * columns + i % columns  # across the whole front
		b.z = (column - columns + 0.5) * pitch
		var depth := (b.rows - 1) * SPACING
		if b.line == 0:
			b.x = -dir * (HALF_GAP + _rng.randf_range(12.0, 55.0))
		else:
			b.x = -dir * (HALF_GAP + 70.0 + depth + _rng.randf_range(0.0, 25.0))
		_make_soldiers(b)
		b.node = AnimatedActorMeshInstance.new()
		b.node.name = "Army%d_Block%d" % [army, i]
		b.node.models = _models
		b.node.paused = true  # the battle drives the clock
		# Shadows from LOD1 at the least: a soldier's shadow drawn from 1,489 vertices instead of 2,698 looks the same
		# on the ground, and the sun's shadow splits draw as many soldiers as the view.
		b.node.shadow_lod = 1
		add_child(b.node)
		_blocks.append(b)
		soldiers += b.count
		_play_block(b, _clip.run if b.line == 0 else _clip.walk)


func _make_soldiers(b: Block) -> void:
	b.positions.resize(b.count)
	b.yaws.resize(b.count)
	b.clips.resize(b.count)
	b.starts.resize(b.count)
	b.phase.resize(b.count)
	b.ids.resize(b.count)
	b.alive.resize(b.count)
	b.alive.fill(1)
	b.front_row.resize(BLOCK_COLS)
	var yaw := FACE_EAST_YAW if b.side == 0 else FACE_EAST_YAW + PI
	for i in b.count:
		var r := i / BLOCK_COLS
		var c := i % BLOCK_COLS
		var jitter := Vector3(_rng.randf_range(-0.2, 0.2), 0.0, _rng.randf_range(-0.2, 0.2))
		b.positions[i] = Vector3(-b.dir * r * SPACING, 0.0, (c - (BLOCK_COLS - 1) * 0.5) * SPACING) + jitter
		b.yaws[i] = yaw + _rng.randf_range(-0.06, 0.06)
		b.phase[i] = _rng.randf_range(0.0, 2.0)
		b.ids[i] = i


func _pair_blocks() -> void:
	for b in _blocks:
		for i in _blocks.size():
			var other := _blocks[i]
			if not is_equal_approx(other.z, b.z) or other.line != 0:
				continue
			if b.line == 0 and other.side != b.side:
				b.opponent = i
			elif b.line == 1 and other.army == b.army:
				b.front = i


# --- behaviour --------------------------------------------------------------------------------------------------

func _step_block(b: Block, dt: float) -> void:
	match b.state:
		State.MARCH:
			_march(b, dt)
		State.FIGHT:
			b.death_debt += b.death_rate * dt
			var tries := 0
			while b.death_debt >= 1.0 and tries < 64:
				tries += 1
				if _kill_one(b):
					b.death_debt -= 1.0


func _march(b: Block, dt: float) -> void:
	var front: Block = _blocks[b.front] if b.front >= 0 else null
	var target: float
	var speed: float
	if front == null:
		target = -b.dir * HALF_GAP
		speed = RUN_SPEED
	else:
		target = front.x - b.dir * ((front.rows - 1) * SPACING + RESERVE_DISTANCE)
		speed = WALK_SPEED
	var nx := b.x + b.dir * speed * dt
	if b.dir * (nx - target) < 0.0:
		b.x = nx
		return
	b.x = target
	if front == null:
		b.state = State.HOLD
		var enemy: Block = _blocks[b.opponent] if b.opponent >= 0 else null
		if enemy != null and enemy.state == State.HOLD:
			_start_fight(b)
			_start_fight(enemy)
		else:
			_play_block(b, _clip.idle)  # wait for the enemy
	elif front.state != State.MARCH:
		b.state = State.HALT
		_play_block(b, _clip.idle)


## Everyone alive in the block plays `clip`, each at its own phase.
func _play_block(b: Block, clip: int) -> void:
	for i in b.count:
		if b.alive[i]:
			b.clips[i] = clip
			b.starts[i] = time - b.phase[i]
	b.changed = true


func _start_fight(b: Block) -> void:
	b.state = State.FIGHT
	b.death_rate = _rng.randf_range(DEATH_RATE.x, DEATH_RATE.y)
	_play_block(b, _clip.idle)
	for i in mini(b.count, ATTACK_RANKS * BLOCK_COLS):
		_play(b, i, _clip.attack, b.phase[i])


func _play(b: Block, i: int, clip: int, phase: float) -> void:
	b.clips[i] = clip
	b.starts[i] = time - phase
	b.changed = true


## The foremost living soldier of a random column falls; the next rank behind steps up to attack.
## Returns false if that column has nobody left.
func _kill_one(b: Block) -> bool:
	var c := _rng.randi_range(0, BLOCK_COLS - 1)
	var r := b.front_row[c]
	var i := r * BLOCK_COLS + c
	if i >= b.count:
		return false
	b.alive[i] = 0
	_play(b, i, _clip.die, 0.0)
	b.front_row[c] = r + 1
	dead += 1
	var next := (r + ATTACK_RANKS) * BLOCK_COLS + c
	if next < b.count:
		_play(b, next, _clip.attack, b.phase[next])
	return true
