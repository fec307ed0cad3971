# Every kept level of detail of every character (the generated soldier and each file in
# res://assets_local/, so a file dropped there is tested with no code change), drawn by a crowd
# node under the real renderer through the shipped shader, with the bake's pruned and bound VAT
# columns, against the same actor at LOD0 in the same pose: each level covers LOD0's silhouette
# and draws nothing far outside it. This is the GPU side of the bake's silhouette check (which
# runs on the CPU): a level bound to the wrong columns, drawn in the reference pose or not drawn
# at all fails here.
extends VatTest

## Share of LOD0's pixels a level must cover, and share of a level's pixels that may lie more
## than LOSS_PX from LOD0's: the bake's limits (1% holes, 6% loss at 120 px, see
## MAX_HOLES_PCT) leave a coarse level's rim a few pixels inside a 256 px silhouette.
const MIN_COVER := 0.90
const MAX_LOSS := 0.06
const LOSS_PX := 2

var _bakes := {}



func cases_level_draws_like_lod0() -> Array:
	return soldier_and_shared_characters()


## `case` baked with LODs at the bake's defaults (a small character: a quarter of its
## triangles as the LOD2 target, as in test_lod_bake.gd).
func _bake(case: String) -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn") if case == "soldier" \
		else load("res://assets_local/".path_join(case))
	va.lod_enabled = false
	check_eq(va.bake(), OK, "%s bakes without LODs" % case)
	var triangles := 0
	for s in va.mesh.get_surface_count():
		triangles += va.mesh.surface_get_array_index_len(s) / 3
	va.lod_enabled = true
	va.lod2_triangles = mini(va.lod2_triangles, maxi(8, triangles / 4))
	check_eq(va.bake(), OK, "%s bakes with LODs" % case)
	return va


func _white_material() -> ShaderMaterial:
	var sh := Shader.new()
	sh.code = """shader_type spatial;
render_mode unshaded, cull_disabled;
#include "res://addons/vat_crowd/shaders/vat_crowd.gdshaderinc"
void vertex() { VatInstance inst = VAT_INSTANCE; vat_vertex(inst, VAT_COLUMN, VERTEX, NORMAL); }
void fragment() { ALBEDO = vec3(1.0); }
"""
	var m := ShaderMaterial.new()
	m.shader = sh
	return m


## The covered pixels of `img` (white on the stage's dark background).
func _mask(img: Image) -> PackedByteArray:
	var out := PackedByteArray()
	out.resize(img.get_width() * img.get_height())
	for y in img.get_height():
		for x in img.get_width():
			out[y * img.get_width() + x] = 1 if img.get_pixel(x, y).v > 0.5 else 0
	return out


## `mask` grown by `px` pixels (square neighbourhood).
func _grown(mask: PackedByteArray, w: int, h: int, px: int) -> PackedByteArray:
	var out := mask.duplicate()
	for y in h:
		for x in w:
			if mask[y * w + x] == 0:
				continue
			for dy in range(-px, px + 1):
				for dx in range(-px, px + 1):
					var xx := x + dx
					var yy := y + dy
					if xx >= 0 and yy >= 0 and xx < w and yy < h:
						out[yy * w + xx] = 1
	return out


func test_each_level_draws_like_lod0(case: String) -> void:
	var va := _bake(case)
	var levels := va.get_lod_count()
	if levels < 2:
		skip("%s has no level past LOD0: %s" % [case, "; ".join(va.get_bake_stats()["lod_notes"])])
		return
	# The middle of the clip with the most frames (a pose away from the reference), framed on
	# that clip's bounds from the front.
	var clip := 0
	for c in va.get_clip_count():
		if va.get_clip_frame_count(c) > va.get_clip_frame_count(clip):
			clip = c
	var box := va.get_clip_bounds(clip)
	var centre := box.get_center()
	var extent := maxf(box.size.x, maxf(box.size.y, box.size.z))
	stage(centre + Vector3(0, 0, extent * 1.3), centre)
	var crowd := AnimatedActorMeshInstance.new()
	crowd.models = [va] as Array[VertexAnimation]
	crowd.material_overrides = [_white_material()] as Array[Material]
	crowd.culling = false
	crowd.paused = true
	root.add_child(crowd)
	crowd.time = 0.0
	crowd.begin()
	crowd.add_actor(Transform3D.IDENTITY, clip, 0.0)
	crowd.add_model(0)
	crowd.time = 0.5 * va.get_clip_duration(clip)
	crowd.submit()
	var masks := []
	for level in levels:
		crowd.force_lod = level
		await frames(2)
		var img := await capture()
		await settle_counts()
		check_eq(crowd.get_lod_counts()[level], 1, "%s: the actor draws at LOD%d" % [case, level])
		save_png(img, "lod_render_%s_lod%d" % [case.get_basename(), level])
		masks.append(_mask(img))
	var size: Vector2i = tree.root.get_texture().get_size()
	var lod0: PackedByteArray = masks[0]
	var near0 := _grown(lod0, size.x, size.y, LOSS_PX)
	var base := 0
	for p in lod0:
		base += p
	check(base > size.x * size.y / 100, "%s: LOD0 covers part of the view (%d px)" % [case, base])
	for level in range(1, levels):
		var m: PackedByteArray = masks[level]
		var covered := 0
		var drawn := 0
		var outside := 0
		for i in m.size():
			drawn += m[i]
			covered += m[i] * lod0[i]
			outside += m[i] * (1 - near0[i])
		var cover := covered / maxf(base, 1.0)
		var loss := outside / maxf(drawn, 1.0)
		print("    %s LOD%d: covers %.2f%% of LOD0, %.2f%% of its pixels past %d px" % [
			case, level, cover * 100.0, loss * 100.0, LOSS_PX])
		check(cover >= MIN_COVER, "%s LOD%d covers %.1f%% of LOD0 (at least %.0f%%)" % [
			case, level, cover * 100.0, MIN_COVER * 100.0])
		check(loss <= MAX_LOSS, "%s LOD%d: %.1f%% drawn outside LOD0 (at most %.0f%%)" % [
			case, level, loss * 100.0, MAX_LOSS * 100.0])
	crowd.queue_free()
	await frames(1)
