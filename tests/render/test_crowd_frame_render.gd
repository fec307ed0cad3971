# The crowd frame under the real renderer (every renderer: see RENDERER_PASS_TESTS in xtask):
# culling leaves the picture as it was, shadows of actors just outside the view included, while
# fewer instances are drawn; levels of detail fall in their distance bands (debug colours).
extends VatTest


func _flat_material() -> ShaderMaterial:
	var sh := Shader.new()
	sh.code = """shader_type spatial;
render_mode unshaded;
#include "res://addons/vat_crowd/shaders/vat_crowd.gdshaderinc"
varying vec4 tint;
void vertex() { VatInstance inst = VAT_INSTANCE; vat_vertex(inst, VAT_COLUMN, VERTEX, NORMAL); tint = inst.tint; }
void fragment() { ALBEDO = tint.rgb; }
"""
	var m := ShaderMaterial.new()
	m.shader = sh
	return m


## The stage's camera.
func _stage_camera() -> Camera3D:
	for c in root.get_children():
		if c is Camera3D:
			return c
	return null


## Checks that `a` and `b` are the same picture (lavapipe renders a scene pixel-identically; the
## bound leaves room for a stray pixel), printing the difference under `label`.
func _check_same_picture(a: Image, b: Image, label: String, what: String) -> void:
	var d := image_diff(a, b)
	print("    %s: mean %.4f/255, %.5f%% over 32/255" % [label, d["mean_abs"], d["frac_over_32"] * 100.0])
	check(d["mean_abs"] <= 0.02 and d["frac_over_32"] <= 0.0001, what)


## Sets `crowd`'s actors (one body instance each) and submits.
func _fill(crowd: AnimatedActorMeshInstance, positions: Array, scales := {}) -> void:
	crowd.begin()
	for i in positions.size():
		var s: float = scales.get(i, 1.0)
		crowd.add_actor(Transform3D(Basis.IDENTITY.scaled(Vector3.ONE * s), positions[i]), 0, 0.0)
		crowd.add_model(0)
	crowd.submit()


func test_culling_keeps_the_picture_and_the_shadows() -> void:
	stage(Vector3(0, 12, 1), Vector3.ZERO, true)
	var cam := _stage_camera()
	cam.global_transform = Transform3D(Basis.from_euler(Vector3(-PI / 2, 0, 0)), Vector3(0, 12, 0))
	var ground := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(200, 200)
	ground.mesh = plane
	root.add_child(ground)
	var sun: DirectionalLight3D = root.get_children().filter(func(n): return n is DirectionalLight3D)[0]
	var travel := -sun.global_basis.z.normalized()
	var toward_sun := -Vector3(travel.x, 0, travel.z).normalized()
	var va := soldier_body()
	# Nine actors around the middle; one three times as tall just outside the view on the sun's
	# side (its shadow falls in); four far away on the other side (their shadows fall away).
	var positions := []
	for i in 3:
		for j in 3:
			positions.append(Vector3(i * 2.5 - 2.5, 0, j * 2.5 - 2.5))
	var out := Vector3.ZERO
	var box := va.get_bounds()
	var tall := 3.0
	while true:
		out += toward_sun * 0.1
		var inside := false
		for k in 8:
			var corner := out + Basis.IDENTITY.scaled(Vector3.ONE * tall) * box.get_endpoint(k)
			# Any yaw: pad the corners by the box's horizontal half-diagonal.
			if cam.is_position_in_frustum(corner) or cam.is_position_in_frustum(corner + toward_sun * tall * 0.6):
				inside = true
		if not inside:
			break
	out += toward_sun * 1.0
	positions.append(out)
	for k in 4:
		positions.append(-toward_sun * 40.0 + Vector3(k * 3.0, 0, 0))
	var tall_index := 9
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [va] as Array[VertexAnimation]
	crowd.paused = true
	root.add_child(crowd)
	_fill(crowd, positions, {tall_index: tall})
	var culled := await capture()
	await settle_counts()
	check_eq(crowd.get_lod_counts(), PackedInt32Array([9]), "the nine inside are drawn")
	if crowd.is_gpu_driven_active():
		# The GPU frame's shadow MultiMeshes carry every caster: the nine and the tall one.
		check_eq(crowd.get_lod_instance_count(0, 0, true), 10, "the tall one outside casts its shadow too")
	else:
		check_eq(crowd.get_lod_instance_count(0, 0, true), 1, "the tall one outside casts its shadow only")
	crowd.culling = false
	await frames(2)
	var full := await capture()
	await settle_counts()
	check_eq(crowd.get_lod_counts(), PackedInt32Array([14]), "culling off draws all fourteen")
	var without := positions.duplicate()
	without.remove_at(tall_index)
	_fill(crowd, without)
	var no_tall := await capture()
	crowd.queue_free()
	await frames(1)
	save_png(culled, "frame_culling_on")
	save_png(full, "frame_culling_off")
	save_png(no_tall, "frame_culling_without_the_tall_actor")
	_check_same_picture(culled, full, "culling on vs off", "culling leaves the picture as it was")
	var shadow := image_diff(full, no_tall)
	print("    the outside actor's shadow: %.4f%% of pixels over 32/255" % (shadow["frac_over_32"] * 100.0))
	check(shadow["frac_over_32"] > 0.0005, "the tall actor's shadow falls into the view (the test can fail)")


# Actors in the view beyond the sun's shadow distance cast no shadow into the shadow maps (their
# shadows would be drawn nowhere): the picture stays as it was, while the shadow pass draws only
# the near actors.
func test_actors_beyond_the_shadow_distance_cast_none() -> void:
	stage(Vector3(0, 5, 10), Vector3(0, 0, -12), true)
	var sun: DirectionalLight3D = root.get_children().filter(func(n): return n is DirectionalLight3D)[0]
	sun.directional_shadow_max_distance = 18.0
	var ground := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(300, 300)
	ground.mesh = plane
	root.add_child(ground)
	# Two rows from 4 m to 90 m in front of the camera.
	var positions := []
	for k in 24:
		for x in [-1.2, 1.2]:
			positions.append(Vector3(x, 0, 6.0 - 3.7 * k))
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [soldier_body()] as Array[VertexAnimation]
	crowd.paused = true
	root.add_child(crowd)
	_fill(crowd, positions)
	var on := await capture()
	await settle_counts()
	var drawn: int = crowd.get_lod_counts()[0]
	var casting: int = crowd.get_lod_instance_count(0, 0, true)
	print("    %d actors drawn, %d cast shadows" % [drawn, casting])
	check(casting > 0 and casting < drawn, "only the actors within the shadow distance cast (%d of %d)" % [casting, drawn])
	crowd.culling = false
	await frames(2)
	var off := await capture()
	await settle_counts()
	if crowd.is_gpu_driven_active():
		# The GPU frame's shadow MultiMeshes always carry every shadow.
		check_eq(crowd.get_lod_instance_count(0, 0, true), positions.size(), "culling off: every actor casts")
	else:
		check_eq(crowd.get_lod_instance_count(0, 0, true), 0, "culling off: the view MultiMesh casts for everyone")
	crowd.cast_shadow = GeometryInstance3D.SHADOW_CASTING_SETTING_OFF
	await frames(2)
	var unshadowed := await capture()
	crowd.queue_free()
	await frames(1)
	save_png(on, "frame_shadow_reach_on")
	save_png(off, "frame_shadow_reach_off")
	_check_same_picture(on, off, "beyond the shadow distance, culling on vs off", "the picture is as it was")
	var shadows := image_diff(on, unshadowed)
	check(shadows["frac_over_32"] > 0.001, "the near actors' shadows are drawn (%.4f%% of pixels; the test can fail)" % (shadows["frac_over_32"] * 100.0))


func test_levels_of_detail_fall_in_their_bands() -> void:
	stage(Vector3(0, 12, 0), Vector3(0, 0, -150))
	var cam := _stage_camera()
	cam.fov = 20.0
	cam.look_at_from_position(Vector3(0, 12, 0), Vector3(0, 0, -150))
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn")
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	va.bake()
	va.lod_meshes = [va.mesh, va.mesh]
	var switch := va.get_lod_switch_distances(cam.fov, tree.root.get_visible_rect().size.y)
	var expected := PackedInt32Array([0, 0, 0])
	var positions := []
	var z := 10.0
	while z <= 300.0:
		for x in [-3.0, 0.0, 3.0]:
			var p := Vector3(x * z / 40.0, 0, -z)
			var d := cam.global_position.distance_to(p)
			# Leave out actors within 3% of a switch (hysteresis plays no part in a first frame,
			# but rounding might).
			if absf(d / switch[0] - 1.0) < 0.03 or absf(d / switch[1] - 1.0) < 0.03:
				continue
			positions.append(p)
			expected[0 if d < switch[0] else (1 if d < switch[1] else 2)] += 1
		z += 10.0
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [va] as Array[VertexAnimation]
	crowd.material_overrides = [_flat_material()] as Array[Material]
	crowd.lod_debug_colors = true
	crowd.culling = false  # the nearest actors are below the view; count every band
	crowd.paused = true
	root.add_child(crowd)
	_fill(crowd, positions)
	var img := await capture()
	await settle_counts()
	save_png(img, "frame_lod_bands")
	print("    switch distances %s, expected per level %s, drawn %s" % [switch, expected, crowd.get_lod_counts()])
	check_eq(crowd.get_lod_counts(), expected, "actors per level")
	var colors := [Color.GREEN, Color.YELLOW, Color.RED]
	var rows := []
	for c in colors:
		var n := 0
		var sum := 0.0
		for y in img.get_height():
			for x in img.get_width():
				var p := img.get_pixel(x, y)
				if absf(p.r - c.r) + absf(p.g - c.g) + absf(p.b - c.b) < 0.15:
					n += 1
					sum += y
		check(n > 20, "level colour %s drawn (%d px)" % [c, n])
		rows.append(sum / maxf(n, 1))
	print("    mean image row of each level: ", rows)
	check(rows[0] > rows[1] and rows[1] > rows[2], "nearer levels lie lower in the picture")
	crowd.force_lod = 2
	await frames(2)
	var forced := await capture()
	await settle_counts()
	check_eq(crowd.get_lod_counts(), PackedInt32Array([0, 0, positions.size()]), "force_lod 2")
	var green := 0
	for y in forced.get_height():
		for x in forced.get_width():
			var p := forced.get_pixel(x, y)
			if p.g > 0.85 and p.r < 0.15 and p.b < 0.15:
				green += 1
	check_eq(green, 0, "force_lod 2: no LOD0 colour left")
	crowd.queue_free()
	await frames(1)


# inst.custom through a custom shader: three actors coloured by their custom data, then a bulk
# change of two of them; bad calls in between change nothing.
func test_custom_data_reaches_a_custom_shader() -> void:
	stage(Vector3(0, 1.5, 6.5), Vector3(0, 0.8, 0))  # +x to the right
	var sh := Shader.new()
	sh.code = """shader_type spatial;
render_mode unshaded;
#include "res://addons/vat_crowd/shaders/vat_crowd.gdshaderinc"
varying vec4 custom;
void vertex() { VatInstance inst = VAT_INSTANCE; vat_vertex(inst, VAT_COLUMN, VERTEX, NORMAL); custom = inst.custom; }
void fragment() { ALBEDO = custom.rgb; }
"""
	var m := ShaderMaterial.new()
	m.shader = sh
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [soldier_body()] as Array[VertexAnimation]
	crowd.material_overrides = [m] as Array[Material]
	crowd.paused = true
	root.add_child(crowd)
	var xs := [-2.0, 0.0, 2.0]
	crowd.begin()
	crowd.add_actor(Transform3D(Basis.IDENTITY, Vector3(xs[0], 0, 0)), 0, 0.0, 1.0, Color.RED)
	crowd.add_model(0)
	for i in [1, 2]:
		crowd.add_actor(Transform3D(Basis.IDENTITY, Vector3(xs[i], 0, 0)), 0, 0.0)
		crowd.add_model(0)
	crowd.set_actor_custom(PackedInt32Array([2]), PackedColorArray([Color.BLUE]))
	crowd.submit()
	var first := await capture()
	crowd.set_actor_custom(PackedInt32Array([0, 1]), PackedColorArray([Color.GREEN, Color.RED]))
	# Bad calls: nothing changes.
	crowd.set_actor_custom(PackedInt32Array([0, 3]), PackedColorArray([Color.BLUE, Color.BLUE]))
	crowd.set_actor_custom(PackedInt32Array([2]), PackedColorArray([Color(NAN, 0, 0)]))
	crowd.set_actor_custom(PackedInt32Array([2]), PackedColorArray())
	crowd.submit()
	var second := await capture()
	crowd.queue_free()
	await frames(1)
	save_png(first, "frame_custom_first")
	save_png(second, "frame_custom_second")
	# Column bands around the three actors (at about 0.34, 0.5 and 0.66 of the width).
	var w := first.get_width()
	var third := int(w * 0.42)
	var near := func(img: Image, c: Color, x0: int, x1: int) -> int:
		var n := 0
		for y in img.get_height():
			for x in range(x0, x1):
				var p := img.get_pixel(x, y)
				if absf(p.r - c.r) + absf(p.g - c.g) + absf(p.b - c.b) < 0.1:
					n += 1
		return n
	check(near.call(first, Color.RED, 0, third) > 100, "actor 0 red (add_actor's custom)")
	check(near.call(first, Color.BLACK, third, w - third) > 100 and near.call(first, Color.RED, third, w) == 0,
		"actor 1 never set: custom 0 (black)")
	check(near.call(first, Color.BLUE, w - third, w) > 100, "actor 2 blue (set_actor_custom)")
	check(near.call(second, Color.GREEN, 0, third) > 100 and near.call(second, Color.RED, 0, third) == 0, "actor 0 turned green")
	check(near.call(second, Color.RED, third, w - third) > 100, "actor 1 turned red")
	check(near.call(second, Color.BLUE, w - third, w) > 100, "actor 2 still blue after the refused calls")


## A crowd node of either kind with the soldier body at `positions`, casting `cast`, drawn.
func _shadow_crowd(actor_node: bool, positions: Array, cast: int) -> Node3D:
	var crowd: Node3D
	if actor_node:
		crowd = AnimatedActorMeshInstance.new()
		crowd.models = [soldier_body()] as Array[VertexAnimation]
	else:
		crowd = AnimatedMeshInstance.new()
		crowd.animation = soldier_body()
	crowd.paused = true
	crowd.cast_shadow = cast
	root.add_child(crowd)
	if actor_node:
		_fill(crowd, positions)
	else:
		for p in positions:
			crowd.add_instance(Transform3D(Basis.IDENTITY, p))
		crowd.submit()
	return crowd


func test_cast_shadow_changes_reach_a_live_crowd() -> void:
	stage(Vector3(0, 6, 8), Vector3.ZERO, true)
	var ground := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(60, 60)
	ground.mesh = plane
	root.add_child(ground)
	var positions := [Vector3(-1.5, 0, 0), Vector3(1.5, 0, 0), Vector3(0, 0, -2)]
	for actor_node in [false, true]:
		var kind := "AnimatedActorMeshInstance" if actor_node else "AnimatedMeshInstance"
		# On -> ShadowsOnly: both cast, so only the setting itself tells the MultiMeshes.
		var live := _shadow_crowd(actor_node, positions, GeometryInstance3D.SHADOW_CASTING_SETTING_ON)
		await frames(2)
		var before := await capture()
		live.cast_shadow = GeometryInstance3D.SHADOW_CASTING_SETTING_SHADOWS_ONLY
		await frames(2)
		var after := await capture()
		live.queue_free()
		await frames(1)
		var fresh := _shadow_crowd(actor_node, positions, GeometryInstance3D.SHADOW_CASTING_SETTING_SHADOWS_ONLY)
		await frames(2)
		var expected := await capture()
		fresh.queue_free()
		await frames(1)
		save_png(after, "cast_shadow_live_%s" % kind)
		_check_same_picture(after, expected, kind + ": changed live vs made so",
			"%s: cast_shadow changed on a live crowd draws what a crowd made with it draws" % kind)
		var d := image_diff(before, after)
		check(d["frac_over_32"] > 0.001, "%s: ShadowsOnly hides the bodies (%.3f%% of pixels changed; the test can fail)" % [kind, d["frac_over_32"] * 100.0])
