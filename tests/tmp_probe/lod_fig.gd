extends SceneTree

func _init() -> void:
	await process_frame
	for f in DirAccess.get_files_at("res://assets_local"):
		if not f.get_extension().to_lower() in ["glb", "gltf"]:
			continue
		var scene := load("res://assets_local/" + f) as PackedScene
		var times := {}
		for lod in [false, true]:
			var va := VertexAnimation.new()
			va.source_scene = scene
			va.lod_enabled = lod
			var t := Time.get_ticks_msec()
			va.bake()
			times[lod] = Time.get_ticks_msec() - t
			if lod:
				var s := va.get_bake_stats()
				var tris := []
				for l: Dictionary in s["lods"]:
					tris.append(l["triangles"])
				print("PROBE %s: tris %s, %d / %d ms (%.1fx); notes %s" % [f, tris, times[true], times[false], float(times[true]) / max(1, times[false]), s["lod_notes"]])
	quit()
