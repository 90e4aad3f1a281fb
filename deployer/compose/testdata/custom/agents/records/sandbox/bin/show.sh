#!/bin/sh
echo record
