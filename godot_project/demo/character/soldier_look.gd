## Materials of the demo soldier and its team-colour "texture variations".
##
## The Armor surface (tunic, helmet, shoulder pads) is UV-mapped onto one 64 x 64
## texture: u goes once around the body (u = 0.5 is the front, -Z; the seam is at
## the back), v in [0, 0.75] runs down the tunic from the collar to the hem, and
## v in [0.75, 1] runs down the helmet and pads from the top to the rim.
extends RefCounted

const TEXTURE_SIZE := 64
## Tunic heights (metres) that map to v = 0 and v = TUNIC_V.
const TUNIC_TOP := 1.55
const TUNIC_HEM := 0.855
const TUNIC_V := 0.75

## Team colours of variation_0 .. variation_3: red, blue, green, gold.
const TEAM_COLORS := [
	Color(0.72, 0.10, 0.08),
	Color(0.10, 0.24, 0.70),
	Color(0.12, 0.50, 0.18),
	Color(0.86, 0.64, 0.12),
]
const EMBLEM_COLORS := [
	Color(0.95, 0.88, 0.62),
	Color(0.95, 0.88, 0.62),
	Color(0.95, 0.88, 0.62),
	Color(0.45, 0.08, 0.06),
]

const MAIL := Color(0.52, 0.54, 0.57)
const STEEL := Color(0.66, 0.68, 0.72)
const BELT := Color(0.28, 0.18, 0.10)
const BUCKLE := Color(0.85, 0.70, 0.30)


## Texture v of a point of the tunic at height y.
static func tunic_v(y: float) -> float:
	return TUNIC_V * clampf((TUNIC_TOP - y) / (TUNIC_TOP - TUNIC_HEM), 0.0, 1.0)


## Height on the tunic of texture v (the inverse of tunic_v).
static func tunic_y(v: float) -> float:
	return TUNIC_TOP - (v / TUNIC_V) * (TUNIC_TOP - TUNIC_HEM)


## The four team-colour textures: 64 x 64 RGBA8 with mipmaps.
static func make_variations() -> Array[ImageTexture]:
	var out: Array[ImageTexture] = []
	for team in TEAM_COLORS.size():
		out.append(ImageTexture.create_from_image(make_variation_image(team)))
	return out


static func make_variation_image(team: int) -> Image:
	var img := Image.create_empty(TEXTURE_SIZE, TEXTURE_SIZE, false, Image.FORMAT_RGBA8)
	var c: Color = TEAM_COLORS[team]
	var e: Color = EMBLEM_COLORS[team]
	for y in TEXTURE_SIZE:
		for x in TEXTURE_SIZE:
			var u := (x + 0.5) / TEXTURE_SIZE
			var v := (y + 0.5) / TEXTURE_SIZE
			var col := _tunic(u, v, x, y, c, e) if v < TUNIC_V else _helmet(u, v, y, c)
			img.set_pixel(x, y, col)
	img.generate_mipmaps()
	return img


static func _tunic(u: float, v: float, x: int, y: int, team: Color, emblem: Color) -> Color:
	var h := tunic_y(v)
	# Chain mail: a fine two-tone weave.
	var col := MAIL.darkened(0.12) if (x + 2 * (y % 2)) % 4 == 0 else MAIL
	var front := absf(u - 0.5)
	var back := minf(u, 1.0 - u)
	var in_front_panel := front < 0.14
	var in_back_panel := back < 0.12
	if (in_front_panel or in_back_panel) and h < 1.46:
		col = team
		# A darker border down both edges of each panel.
		if absf(front - 0.14) < 0.016 or absf(back - 0.12) < 0.016:
			col = team.darkened(0.35)
	if h > 1.48:
		col = team.darkened(0.2)
	if h < 0.9:
		col = team.darkened(0.3)
	# Emblem: a diamond on the chest.
	if absf(u - 0.5) / 0.075 + absf(h - 1.30) / 0.09 < 1.0:
		col = emblem
	# Belt with a buckle at the front.
	if h > 0.975 and h < 1.035:
		col = BUCKLE if front < 0.03 else BELT
	return col


static func _helmet(u: float, v: float, y: int, team: Color) -> Color:
	var col := STEEL.darkened(0.1 * (v - TUNIC_V) / (1.0 - TUNIC_V))
	if y % 4 == 0:
		col = col.darkened(0.05)
	var crest := absf(u - 0.5) < 0.035 or u < 0.035 or u > 0.965
	if crest and v < 0.93:
		col = team
	if v >= 0.94:
		col = team.darkened(0.15)
	return col


static func armor_material(albedo: Texture2D) -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.resource_name = "Armor"
	m.albedo_texture = albedo
	m.metallic = 0.35
	m.roughness = 0.45
	return m


static func skin_material() -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.resource_name = "Skin"
	m.albedo_color = Color(0.86, 0.64, 0.50)
	m.roughness = 0.75
	return m


## Trousers, sleeves, boots and eyes: one material coloured per vertex.
static func leather_material() -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.resource_name = "Leather"
	m.vertex_color_use_as_albedo = true
	m.vertex_color_is_srgb = true
	m.roughness = 0.85
	return m


static func steel_material() -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.resource_name = "Steel"
	m.albedo_color = Color(0.80, 0.82, 0.86)
	m.metallic = 0.7
	m.roughness = 0.22
	return m


## The shield's painted face, rim and boss: coloured per vertex.
static func shield_material() -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.resource_name = "ShieldPaint"
	m.vertex_color_use_as_albedo = true
	m.vertex_color_is_srgb = true
	m.roughness = 0.6
	m.metallic = 0.1
	return m
