## An orbit camera over the battlefield: WASD / arrows pan, mouse wheel zooms, right-drag orbits, Q / E rotate.
extends Camera3D

const PAN_SPEED := 0.8  ## fraction of the distance per second
const ROTATE_SPEED := 1.2  ## radians per second (Q / E)
const ORBIT_SENSITIVITY := 0.005  ## radians per pixel (right drag)
const ZOOM_STEP := 1.12
const MIN_DISTANCE := 4.0
const MAX_DISTANCE := 1500.0
const MIN_PITCH := deg_to_rad(-85.0)
const MAX_PITCH := deg_to_rad(-5.0)

## The point the camera orbits, on the ground.
var target := Vector3.ZERO
## Turn about +Y, radians (0 looks towards -Z).
var yaw := 0.0
## Tilt, radians (negative looks down).
var pitch := deg_to_rad(-30.0)
var distance := 120.0

var _orbiting := false


func _ready() -> void:
	_apply()


## Places the camera at `yaw` / `pitch` (radians), `dist` metres from `point`.
func look_at_point(point: Vector3, new_yaw: float, new_pitch: float, dist: float) -> void:
	target = point
	yaw = new_yaw
	pitch = clampf(new_pitch, MIN_PITCH, MAX_PITCH)
	distance = clampf(dist, MIN_DISTANCE, MAX_DISTANCE)
	_apply()


func _process(delta: float) -> void:
	var pan := Vector2.ZERO
	if Input.is_key_pressed(KEY_W) or Input.is_key_pressed(KEY_UP):
		pan.y -= 1.0
	if Input.is_key_pressed(KEY_S) or Input.is_key_pressed(KEY_DOWN):
		pan.y += 1.0
	if Input.is_key_pressed(KEY_A) or Input.is_key_pressed(KEY_LEFT):
		pan.x -= 1.0
	if Input.is_key_pressed(KEY_D) or Input.is_key_pressed(KEY_RIGHT):
		pan.x += 1.0
	var turn := 0.0
	if Input.is_key_pressed(KEY_Q):
		turn += 1.0
	if Input.is_key_pressed(KEY_E):
		turn -= 1.0
	if pan == Vector2.ZERO and turn == 0.0:
		return
	yaw += turn * ROTATE_SPEED * delta
	var step := pan.normalized() * PAN_SPEED * distance * delta
	target += Basis(Vector3.UP, yaw) * Vector3(step.x, 0.0, step.y)
	_apply()


func _unhandled_input(event: InputEvent) -> void:
	if event is InputEventMouseButton:
		var mb := event as InputEventMouseButton
		if mb.button_index == MOUSE_BUTTON_RIGHT:
			_orbiting = mb.pressed
		elif mb.pressed and mb.button_index == MOUSE_BUTTON_WHEEL_UP:
			distance = maxf(MIN_DISTANCE, distance / ZOOM_STEP)
			_apply()
		elif mb.pressed and mb.button_index == MOUSE_BUTTON_WHEEL_DOWN:
			distance = minf(MAX_DISTANCE, distance * ZOOM_STEP)
			_apply()
	elif event is InputEventMouseMotion and _orbiting:
		var mm := event as InputEventMouseMotion
		yaw -= mm.relative.x * ORBIT_SENSITIVITY
		pitch = clampf(pitch - mm.relative.y * ORBIT_SENSITIVITY, MIN_PITCH, MAX_PITCH)
		_apply()


func _apply() -> void:
	var orbit := Basis(Vector3.UP, yaw) * Basis(Vector3.RIGHT, pitch)
	global_transform = Transform3D(orbit, target + orbit * Vector3(0.0, 0.0, distance))
