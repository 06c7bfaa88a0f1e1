//go:build !linux

package main

func setParentDeathSignal() {}
