module noderotation.io/scripts/tzdata

go 1.26
