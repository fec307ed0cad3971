# The LOD chain a bake builds, on the generated soldier and every character in res://assets_local/
# (a file added there is tested with no code change). Each character is baked twice: with LODs
# (the default) and with lod_enabled = false, the unchanged path, which is the ground truth for
# every VAT column (a source vertex, or a weighted sum of three).
extends VatTest

## LOD1's share of LOD0's triangles.
const LOD1_MIN := 0.45
const LOD1_MAX := 0.60
## Largest error of a stored column against the weighted sum of the full bake's vertices, as a
## share of the bounds' diagonal (half precision quantises each to 2^-12 of the extent per axis).
const COLUMN_TOLERANCE := 2e-3
## Largest error of a bound (LOD2) column in bone storage against the weighted sum of its sources'
## skinned positions, as a share of the diagonal: the most the bake accepts (MAX_BONE_ERROR_SHARE).
const BONE_BOUND_TOLERANCE := 1e-2
## Frame-column pairs compared per character at most (every frame when the VAT is smaller).
const MAX_COMPARED := 400000

var _bakes := {}


func cases_chain_is_built_and_smaller() -> Array:
	return soldier_and_shared_characters()


func cases_lod1_shares_lod0() -> Array:
	return soldier_and_shared_characters()


func cases_lod2_is_closed_and_bound() -> Array:
	return soldier_and_shared_characters()


func cases_column_decodes_as_its_sources() -> Array:
	return soldier_and_shared_characters()


func cases_switch_distances() -> Array:
	return soldier_and_shared_characters()


func _scene(case: String) -> PackedScene:
	if case == "soldier":
		return load("res://generated/soldier.tscn")
	return load("res://assets_local/".path_join(case))


## [with LODs, without], baked once per character. A character with fewer than four times the
## default LOD2 target's triangles gets a quarter of its triangles as its target.
func _pair(case: String) -> Array:
	if not _bakes.has(case):
		var off := VertexAnimation.new()
		off.source_scene = _scene(case)
		off.lod_enabled = false
		check_eq(off.bake(), OK, "%s bakes without LODs" % case)
		var triangles := 0
		for s in off.mesh.get_surface_count():
			triangles += off.mesh.surface_get_array_index_len(s) / 3
		var on := VertexAnimation.new()
		on.source_scene = off.source_scene
		on.lod2_triangles = mini(on.lod2_triangles, maxi(8, triangles / 4))
		check_eq(on.bake(), OK, "%s bakes with LODs" % case)
		_bakes[case] = [on, off]
	return _bakes[case]


## False, after a skip naming the reason, when the core could not build `case`'s chain or
## dropped level `built` (the reasons are in the stats' lod_notes): those are the LOD tools'
## limits on this character, reported here so they stay visible.
func _has_level(case: String, stats: Dictionary, built: int) -> bool:
	if not _level(stats, built).is_empty():
		return true
	var notes: PackedStringArray = stats["lod_notes"]
	if notes.is_empty():
		fail("%s has no LOD%d and no note saying why" % [case, built])
	else:
		skip("%s has no LOD%d: %s" % [case, built, "; ".join(notes)])
	return false


## The level's columns per vertex (from the column channel), all surfaces, with each surface's
## indices rewritten to columns.
func _columns_and_triangles(va: VertexAnimation, level: int) -> Dictionary:
	var mesh := va.get_lod_mesh(level)
	var channel := Mesh.ARRAY_CUSTOM0 + va.column_channel
	var columns := PackedInt32Array()
	var uvs := PackedVector2Array()
	var tris := PackedInt32Array()
	for s in mesh.get_surface_count():
		var arrays := mesh.surface_get_arrays(s)
		var col: PackedFloat32Array = arrays[channel]
		var uv = arrays[Mesh.ARRAY_TEX_UV]
		for i in col.size():
			columns.append(int(col[i]))
			uvs.append(uv[i] if uv != null else Vector2.ZERO)
		for i in arrays[Mesh.ARRAY_INDEX]:
			tris.append(int(col[i]))
	return {"columns": columns, "uvs": uvs, "triangles": tris}


## Column `c`'s point: the blend of its sources (`src`, the stats' `lod_column_sources`: three
## source vertices, then their weights) at source-vertex positions `full`.
func _column_point(full: PackedVector3Array, src: PackedFloat32Array, c: int) -> Vector3:
	return full[int(src[c * 6])] * src[c * 6 + 3] + full[int(src[c * 6 + 1])] * src[c * 6 + 4] \
		+ full[int(src[c * 6 + 2])] * src[c * 6 + 5]


## Per column of `on`, the first column (in order along x) whose point lies within `tolerance` of
## its own, itself if none: each column's point is the blend of its sources (`src`, the stats'
## `lod_column_sources`) in the first frame of the LOD-off bake `off`.
func _joined_points(on: VertexAnimation, off: VertexAnimation, src: PackedFloat32Array, tolerance: float) -> PackedInt32Array:
	var full := off.decode_frame(0, 0)
	var n := on.vertex_count
	var at := PackedVector3Array()
	at.resize(n)
	for c in n:
		at[c] = _column_point(full, src, c)
	var order := range(n)
	order.sort_custom(func(a: int, b: int) -> bool: return at[a].x < at[b].x)
	var joined := PackedInt32Array(range(n))
	for i in n:
		var a: int = order[i]
		if joined[a] != a:
			continue
		for j in range(i + 1, n):
			var b: int = order[j]
			if at[b].x - at[a].x > tolerance:
				break
			if joined[b] == b and at[a].distance_to(at[b]) <= tolerance:
				joined[b] = a
	return joined


func _level(stats: Dictionary, built: int) -> Dictionary:
	for l: Dictionary in stats["lods"]:
		if l["built_level"] == built:
			return l
	return {}


func test_each_chain_is_built_and_smaller(case) -> void:
	var pair := _pair(case)
	var on: VertexAnimation = pair[0]
	var off: VertexAnimation = pair[1]
	var stats := on.get_bake_stats()
	if not _has_level(case, stats, 0):
		return
	var lod0 := _level(stats, 0)
	check_eq(stats["source_vertices"], off.vertex_count, "source vertices are the full bake's")
	# The weld can only merge copies (same position, normals within 25 degrees): a source
	# without any keeps its count.
	var seen := {}
	var copies := 0
	var normals := off.decode_frame_normals(0, 0)
	var positions := off.decode_frame(0, 0)
	for i in positions.size():
		var p := positions[i]
		if seen.has(p) and normals[seen[p]].dot(normals[i]) >= cos(deg_to_rad(25.0)):
			copies += 1
		seen[p] = i
	check(lod0["vertices"] <= off.vertex_count, "%s LOD0 has no more vertices than the source" % case)
	if copies > 0:
		check(lod0["vertices"] < off.vertex_count, "%s LOD0 has fewer vertices (%d) than the source (%d, %d coincident copies with close normals)" % [case, lod0["vertices"], off.vertex_count, copies])
	# VAT bytes follow the columns: the weld removes some, LOD2 adds its bound ones. They drop
	# whenever the columns do, and rise only by LOD2's columns over what the weld saved.
	var lod2_columns := 0
	for l: Dictionary in stats["lods"]:
		if l["built_level"] == 2:
			lod2_columns = l["vertices"]
	var saved: int = off.vertex_count - int(lod0["vertices"])
	if saved >= lod2_columns:
		check(stats["vat_bytes_after"] < stats["vat_bytes_before"] or saved == 0, "%s VAT bytes drop (%d -> %d)" % [case, stats["vat_bytes_before"], stats["vat_bytes_after"]])
	else:
		print("  %s: LOD2's %d bound columns outweigh the weld's %d saved ones: VAT bytes %d -> %d" % [case, lod2_columns, saved, stats["vat_bytes_before"], stats["vat_bytes_after"]])
		check(on.vertex_count <= off.vertex_count - saved + lod2_columns, "%s columns are LOD0's and LOD2's only" % case)
	check_eq(stats["vat_bytes_before"], off.get_bake_stats()["bytes"], "bytes before are the full bake's")
	check_eq(on.vertex_count * 6, stats["lod_column_sources"].size(), "vertex_count is the column count")
	check_eq(on.get_lod_count(), stats["lods"].size(), "one mesh per kept level")
	for l: Dictionary in stats["lods"]:
		check(l["holes_pct"] <= 1.0, "%s LOD%d holes %.2f%% <= 1%%" % [case, l["built_level"], l["holes_pct"]])
		check(l["loss_pct"] <= 6.0, "%s LOD%d loss %.2f%% <= 6%%" % [case, l["built_level"], l["loss_pct"]])
		var m := on.get_lod_mesh(l["level"])
		var tris := 0
		for s in m.get_surface_count():
			tris += m.surface_get_array_index_len(s) / 3
		check_eq(tris, l["triangles"], "LOD%d mesh has the reported triangles" % l["built_level"])
	check(stats["lod_ms"] > 0.0, "the LOD build time is reported")


## The bake retries LOD1 inside its window until it passes the silhouette check; a LOD1 that
## still fails is dropped and reported (a skip naming the figures: the LOD tools' limit there).
func test_each_lod1_shares_lod0(case) -> void:
	var on: VertexAnimation = _pair(case)[0]
	var stats := on.get_bake_stats()
	if not _has_level(case, stats, 0) or not _has_level(case, stats, 1):
		return
	var lod0 := _level(stats, 0)
	var lod1 := _level(stats, 1)
	var share := float(lod1["triangles"]) / float(lod0["triangles"])
	check(share >= LOD1_MIN and share <= LOD1_MAX, "%s LOD1 has %.1f%% of LOD0's triangles" % [case, share * 100.0])
	var a := _columns_and_triangles(on, lod0["level"])
	var b := _columns_and_triangles(on, lod1["level"])
	var uv_of := {}
	for i in a["columns"].size():
		uv_of[Vector3i(a["columns"][i], 0, 0)] = true
		uv_of[[a["columns"][i], a["uvs"][i]]] = true
	var foreign := 0
	var new_uv := 0
	for i in b["columns"].size():
		if not uv_of.has(Vector3i(b["columns"][i], 0, 0)):
			foreign += 1
		elif not uv_of.has([b["columns"][i], b["uvs"][i]]):
			new_uv += 1
	check_eq(foreign, 0, "%s: every LOD1 column is a LOD0 column" % case)
	check_eq(new_uv, 0, "%s: every LOD1 vertex has a LOD0 vertex's column and UV" % case)


func test_each_lod2_is_closed_and_bound(case) -> void:
	var on: VertexAnimation = _pair(case)[0]
	var stats := on.get_bake_stats()
	if not _has_level(case, stats, 2):
		return
	var lod2 := _level(stats, 2)
	# Within its target, or within a retry's (twice or four times it, at most half of LOD1's
	# triangles) with a note saying so.
	var target: int = on.lod2_triangles
	var raised := ""
	for note in stats["lod_notes"]:
		if note.contains("LOD2") and note.contains("aimed higher"):
			raised = note
	if lod2["triangles"] > target:
		check(raised.contains("has %d triangles" % lod2["triangles"]), "%s LOD2 above its target %d is noted: %s" % [case, target, raised])
		var lod1 := _level(stats, 1)
		target = 4 * target if lod1.is_empty() else mini(4 * target, lod1["triangles"] / 2)
	else:
		check(raised.is_empty(), "%s LOD2 within its target has no retry note: %s" % [case, raised])
	check(lod2["triangles"] <= target, "%s LOD2 has %d triangles, within its target %d" % [case, lod2["triangles"], target])
	var t: PackedInt32Array = _columns_and_triangles(on, lod2["level"])["triangles"]
	var src: PackedFloat32Array = stats["lod_column_sources"]
	# Closed and manifold where it is drawn: no directed edge twice by column (LOD2's vertices each
	# have their own bound column), and every directed edge between two points as often as its
	# reverse. By points, not columns: where LOD2 keeps a hard edge it splits a vertex into copies
	# bound to one point of the source, as LOD0 is split there.
	var off: VertexAnimation = _pair(case)[1]
	var point := _joined_points(on, off, src, 1e-4 * off.bounds.size.length())
	var edges := {}
	var between := {}
	var repeated := 0
	var copies := {}
	for i in range(0, t.size(), 3):
		for k in 3:
			var e := Vector2i(t[i + k], t[i + (k + 1) % 3])
			if edges.has(e):
				repeated += 1
			edges[e] = true
			var p := Vector2i(point[e.x], point[e.y])
			between[p] = between.get(p, 0) + 1
			if point[e.x] != e.x:
				copies[e.x] = true
	var open := 0
	for p: Vector2i in between:
		if between[p] != between.get(Vector2i(p.y, p.x), 0):
			open += 1
	print("    %s LOD2: %d columns share their point with another (hard-edge copies, corners snapped to)" % [case, copies.size()])
	check_eq(repeated, 0, "%s LOD2: no edge used twice the same way" % case)
	check_eq(open, 0, "%s LOD2: every edge has its opposite (closed)" % case)
	var bad := 0
	for c in _columns_and_triangles(on, lod2["level"])["columns"]:
		var w := Vector3(src[c * 6 + 3], src[c * 6 + 4], src[c * 6 + 5])
		if w.x < 0.0 or w.y < 0.0 or w.z < 0.0 or absf(w.x + w.y + w.z - 1.0) > 1e-4:
			bad += 1
	check_eq(bad, 0, "%s: every LOD2 vertex is bound (weights >= 0 summing to 1)" % case)


func test_each_column_decodes_as_its_sources(case) -> void:
	var pair := _pair(case)
	var on: VertexAnimation = pair[0]
	var off: VertexAnimation = pair[1]
	if not _has_level(case, on.get_bake_stats(), 0):
		return
	var src: PackedFloat32Array = on.get_bake_stats()["lod_column_sources"]
	var diag := off.bounds.size.length()
	var columns := on.vertex_count
	var step := maxi(1, on.frame_count * columns / MAX_COMPARED)
	# In bone storage a column bound to a triangle skins one blended point with its corners'
	# blended influences instead of blending three skinned corners (docs/formats.md, Storage): the
	# bake refuses more than BONE_BOUND_TOLERANCE between the two. Source-vertex columns hold to
	# COLUMN_TOLERANCE in both storages.
	var bones := on.baked_storage == VertexAnimation.STORAGE_BONES
	var worst := 0.0
	var worst_bound := 0.0
	var compared := 0
	for clip in on.get_clip_count():
		for f in range(0, on.get_clip_frame_count(clip), step):
			var got := on.decode_frame(clip, f)
			var full := off.decode_frame(clip, f)
			for c in columns:
				var want := _column_point(full, src, c)
				var d := got[c].distance_to(want)
				if bones and src[c * 6 + 3] < 1.0:
					worst_bound = maxf(worst_bound, d)
				else:
					worst = maxf(worst, d)
			compared += 1
	check(compared > 0, "frames were compared")
	check(worst <= COLUMN_TOLERANCE * diag, "%s: every source-vertex column equals its source within %.6f of the diagonal (worst %.6f) over %d frames" % [case, COLUMN_TOLERANCE, worst / diag, compared])
	if bones:
		print("    %s, bone storage: bound columns within %.6f of their sources' blend (bake's bone_error %.6f)" % [case, worst_bound / diag, on.get_bake_stats()["bone_error"]])
		check(worst_bound <= BONE_BOUND_TOLERANCE * diag, "%s: every bound column lies within %.3f of the diagonal of its sources' blend (worst %.6f)" % [case, BONE_BOUND_TOLERANCE, worst_bound / diag])


func test_each_switch_distances(case) -> void:
	var on: VertexAnimation = _pair(case)[0]
	if not _has_level(case, on.get_bake_stats(), 1):
		return
	var want := [93.3, 167.9]
	for height in [720, 1440, 2160]:
		var d := on.get_lod_switch_distances(30.0, height)
		check_eq(d.size(), on.get_lod_count() - 1, "one distance per level past LOD0")
		for i in mini(d.size(), 2):
			check_near(d[i], want[i], 0.5, "%s LOD%d starts at %.1f m at %d px" % [case, i + 1, want[i], height])


## The smallest character, baked once, for the bad-input tests.
func _small() -> VertexAnimation:
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn")
	va.meshes = [NodePath("Skeleton/Body")] as Array[NodePath]
	check_eq(va.bake(), OK, "the soldier's body bakes")
	return va


func _refused(va: VertexAnimation, what: String) -> void:
	var mesh := va.mesh
	var columns := va.vertex_count
	var lods := va.get_lod_count()
	check_eq(va.bake(), FAILED, "%s is refused" % what)
	check(va.mesh == mesh, "%s keeps the previous mesh" % what)
	check_eq(va.vertex_count, columns, "%s keeps the previous VAT" % what)
	check_eq(va.get_lod_count(), lods, "%s keeps the previous LODs" % what)


func test_lod_target_above_the_source_bakes_without_lods_and_says_so() -> void:
	var va := _small()
	va.lod2_triangles = 1000000
	check_eq(va.bake(), OK, "a character smaller than the LOD2 target still bakes")
	check_eq(va.get_lod_count(), 1, "without LOD meshes")
	check_eq(va.vertex_count, va.get_bake_stats()["source_vertices"], "over every source vertex")
	var notes: PackedStringArray = va.get_bake_stats()["lod_notes"]
	check(notes.size() == 1 and notes[0].contains("lod2_triangles"), "and the stats say why: %s" % notes)


func test_a_piece_whose_lod1_is_below_the_lod2_target_keeps_lod1() -> void:
	# The soldier's sword: more triangles than lod2_triangles, but its LOD1 has fewer. It used to
	# lose every LOD mesh (and warn); LOD1 is simply its coarsest level.
	var va := VertexAnimation.new()
	va.source_scene = load("res://generated/soldier.tscn")
	va.meshes = [NodePath("Skeleton/SwordAttachment/Sword")] as Array[NodePath]
	va.lod_enabled = false
	check_eq(va.bake(), OK, "the sword bakes without LOD")
	var triangles := 0
	for s in va.mesh.get_surface_count():
		triangles += va.mesh.surface_get_arrays(s)[Mesh.ARRAY_INDEX].size() / 3
	va.lod_enabled = true
	va.lod2_triangles = int(triangles * 0.75)
	check_eq(va.bake(), OK, "the sword bakes with LOD2's target between LOD1's and LOD0's triangles")
	var notes: PackedStringArray = va.get_bake_stats()["lod_notes"]
	var said := false
	for n in notes:
		said = said or (n.contains("LOD2") and n.contains("not built"))
	check(said, "the stats say LOD2 was not built and why: %s" % notes)
	check(va.get_lod_count() <= 2, "no LOD2 (%d levels)" % va.get_lod_count())
	var lod1_kept := va.get_lod_count() == 2
	var lod1_dropped := false
	for n in notes:
		lod1_dropped = lod1_dropped or n.begins_with("LOD1")
	check(lod1_kept or lod1_dropped, "LOD1 is kept unless the silhouette check dropped it: %s" % notes)


func test_voxel_size_that_empties_the_remesh_is_refused() -> void:
	var va := _small()
	va.lod_voxel_size = 1000.0
	_refused(va, "a voxel size larger than the character")


func test_character_without_triangles_is_refused() -> void:
	var va := _small()
	var root := Node3D.new()
	root.name = "Lines"
	var mi := MeshInstance3D.new()
	mi.name = "Mesh"
	var lines := ArrayMesh.new()
	var arrays := []
	arrays.resize(Mesh.ARRAY_MAX)
	arrays[Mesh.ARRAY_VERTEX] = PackedVector3Array([Vector3.ZERO, Vector3.UP, Vector3.RIGHT, Vector3.ONE])
	lines.add_surface_from_arrays(Mesh.PRIMITIVE_LINES, arrays)
	mi.mesh = lines
	root.add_child(mi)
	mi.owner = root
	var player := AnimationPlayer.new()
	player.name = "AnimationPlayer"
	var lib := AnimationLibrary.new()
	var anim := Animation.new()
	anim.length = 1.0
	var track := anim.add_track(Animation.TYPE_POSITION_3D)
	anim.track_set_path(track, NodePath("Mesh"))
	anim.position_track_insert_key(track, 0.0, Vector3.ZERO)
	anim.position_track_insert_key(track, 1.0, Vector3.UP)
	lib.add_animation("move", anim)
	player.add_animation_library("", lib)
	root.add_child(player)
	player.owner = root
	var scene := PackedScene.new()
	scene.pack(root)
	root.free()
	va.source_scene = scene
	va.meshes = [] as Array[NodePath]
	_refused(va, "a character with no triangles")
