package engine

func (r *Room) nativeFamily() string { return "room" }

// nativeItems are the messages a room stores, normal and important.
func (r *Room) nativeItems() int64 { return int64(r.normal.len() + r.important.len()) }
