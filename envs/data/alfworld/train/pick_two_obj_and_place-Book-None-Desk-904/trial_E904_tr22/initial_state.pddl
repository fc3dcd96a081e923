(define (problem plan_trial_E904_tr22)
(:domain alfred)
(:objects
  agent1 - agent
  AlarmClockType - otype
  BookType - otype
  ButterKnifeType - otype
  CDType - otype
  CellPhoneType - otype
  CreditCardType - otype
  DeskLampType - otype
  KeyChainType - otype
  KnifeType - otype
  LaptopType - otype
  MugType - otype
  PenType - otype
  PencilType - otype
  PillowType - otype
  BedType - rtype
  DeskType - rtype
  DrawerType - rtype
  DresserType - rtype
  FridgeType - rtype
  GarbageCanType - rtype
  MicrowaveType - rtype
  SafeType - rtype
  ShelfType - rtype
  SideTableType - rtype
  SinkBasinType - rtype
  Bed_bar_1 - receptacle
  Desk_bar_1 - receptacle
  SideTable_bar_1 - receptacle
  SideTable_bar_2 - receptacle
  Dresser_bar_1 - receptacle
  Drawer_bar_1 - receptacle
  Drawer_bar_2 - receptacle
  Drawer_bar_3 - receptacle
  Shelf_bar_1 - receptacle
  Shelf_bar_2 - receptacle
  GarbageCan_bar_1 - receptacle
  Safe_bar_1 - receptacle
  AlarmClock_bar_1 - object
  Book_bar_1 - object
  Book_bar_2 - object
  CD_bar_1 - object
  CellPhone_bar_1 - object
  CellPhone_bar_2 - object
  CreditCard_bar_1 - object
  DeskLamp_bar_1 - object
  KeyChain_bar_1 - object
  Laptop_bar_1 - object
  Mug_bar_1 - object
  Pen_bar_1 - object
  Pencil_bar_1 - object
  Pillow_bar_1 - object
  loc_bar_0 - location
  loc_bar_1 - location
  loc_bar_2 - location
  loc_bar_3 - location
  loc_bar_4 - location
  loc_bar_5 - location
  loc_bar_6 - location
  loc_bar_7 - location
  loc_bar_8 - location
  loc_bar_9 - location
  loc_bar_10 - location
  loc_bar_11 - location
  loc_bar_12 - location
)
(:init
  (atLocation agent1 loc_bar_0)
  (receptacleType Bed_bar_1 BedType)
  (receptacleAtLocation Bed_bar_1 loc_bar_1)
  (receptacleType Desk_bar_1 DeskType)
  (receptacleAtLocation Desk_bar_1 loc_bar_2)
  (receptacleType SideTable_bar_1 SideTableType)
  (receptacleAtLocation SideTable_bar_1 loc_bar_3)
  (receptacleType SideTable_bar_2 SideTableType)
  (receptacleAtLocation SideTable_bar_2 loc_bar_4)
  (receptacleType Dresser_bar_1 DresserType)
  (receptacleAtLocation Dresser_bar_1 loc_bar_5)
  (receptacleType Drawer_bar_1 DrawerType)
  (receptacleAtLocation Drawer_bar_1 loc_bar_6)
  (openable Drawer_bar_1)
  (receptacleType Drawer_bar_2 DrawerType)
  (receptacleAtLocation Drawer_bar_2 loc_bar_7)
  (openable Drawer_bar_2)
  (receptacleType Drawer_bar_3 DrawerType)
  (receptacleAtLocation Drawer_bar_3 loc_bar_8)
  (openable Drawer_bar_3)
  (receptacleType Shelf_bar_1 ShelfType)
  (receptacleAtLocation Shelf_bar_1 loc_bar_9)
  (receptacleType Shelf_bar_2 ShelfType)
  (receptacleAtLocation Shelf_bar_2 loc_bar_10)
  (receptacleType GarbageCan_bar_1 GarbageCanType)
  (receptacleAtLocation GarbageCan_bar_1 loc_bar_11)
  (receptacleType Safe_bar_1 SafeType)
  (receptacleAtLocation Safe_bar_1 loc_bar_12)
  (openable Safe_bar_1)
  (objectType AlarmClock_bar_1 AlarmClockType)
  (inReceptacle AlarmClock_bar_1 SideTable_bar_2)
  (objectAtLocation AlarmClock_bar_1 loc_bar_4)
  (pickupable AlarmClock_bar_1)
  (objectType Book_bar_1 BookType)
  (inReceptacle Book_bar_1 SideTable_bar_1)
  (objectAtLocation Book_bar_1 loc_bar_3)
  (pickupable Book_bar_1)
  (objectType Book_bar_2 BookType)
  (inReceptacle Book_bar_2 Shelf_bar_1)
  (objectAtLocation Book_bar_2 loc_bar_9)
  (pickupable Book_bar_2)
  (objectType CD_bar_1 CDType)
  (inReceptacle CD_bar_1 Drawer_bar_1)
  (objectAtLocation CD_bar_1 loc_bar_6)
  (pickupable CD_bar_1)
  (objectType CellPhone_bar_1 CellPhoneType)
  (inReceptacle CellPhone_bar_1 Bed_bar_1)
  (objectAtLocation CellPhone_bar_1 loc_bar_1)
  (pickupable CellPhone_bar_1)
  (objectType CellPhone_bar_2 CellPhoneType)
  (inReceptacle CellPhone_bar_2 Drawer_bar_2)
  (objectAtLocation CellPhone_bar_2 loc_bar_7)
  (pickupable CellPhone_bar_2)
  (objectType CreditCard_bar_1 CreditCardType)
  (inReceptacle CreditCard_bar_1 Drawer_bar_3)
  (objectAtLocation CreditCard_bar_1 loc_bar_8)
  (pickupable CreditCard_bar_1)
  (objectType DeskLamp_bar_1 DeskLampType)
  (inReceptacle DeskLamp_bar_1 Desk_bar_1)
  (objectAtLocation DeskLamp_bar_1 loc_bar_2)
  (toggleable DeskLamp_bar_1)
  (objectType KeyChain_bar_1 KeyChainType)
  (inReceptacle KeyChain_bar_1 Safe_bar_1)
  (objectAtLocation KeyChain_bar_1 loc_bar_12)
  (pickupable KeyChain_bar_1)
  (objectType Laptop_bar_1 LaptopType)
  (inReceptacle Laptop_bar_1 Desk_bar_1)
  (objectAtLocation Laptop_bar_1 loc_bar_2)
  (pickupable Laptop_bar_1)
  (objectType Mug_bar_1 MugType)
  (inReceptacle Mug_bar_1 Shelf_bar_2)
  (objectAtLocation Mug_bar_1 loc_bar_10)
  (pickupable Mug_bar_1)
  (heatable Mug_bar_1)
  (coolable Mug_bar_1)
  (cleanable Mug_bar_1)
  (objectType Pen_bar_1 PenType)
  (inReceptacle Pen_bar_1 Desk_bar_1)
  (objectAtLocation Pen_bar_1 loc_bar_2)
  (pickupable Pen_bar_1)
  (objectType Pencil_bar_1 PencilType)
  (inReceptacle Pencil_bar_1 Dresser_bar_1)
  (objectAtLocation Pencil_bar_1 loc_bar_5)
  (pickupable Pencil_bar_1)
  (objectType Pillow_bar_1 PillowType)
  (inReceptacle Pillow_bar_1 Bed_bar_1)
  (objectAtLocation Pillow_bar_1 loc_bar_1)
  (pickupable Pillow_bar_1)
  (canContain BedType BookType)
  (canContain BedType CellPhoneType)
  (canContain BedType CreditCardType)
  (canContain BedType KeyChainType)
  (canContain BedType LaptopType)
  (canContain BedType PillowType)
  (canContain DeskType AlarmClockType)
  (canContain DeskType BookType)
  (canContain DeskType CDType)
  (canContain DeskType CellPhoneType)
  (canContain DeskType CreditCardType)
  (canContain DeskType KeyChainType)
  (canContain DeskType LaptopType)
  (canContain DeskType MugType)
  (canContain DeskType PenType)
  (canContain DeskType PencilType)
  (canContain DeskType PillowType)
  (canContain DrawerType AlarmClockType)
  (canContain DrawerType BookType)
  (canContain DrawerType CDType)
  (canContain DrawerType CellPhoneType)
  (canContain DrawerType CreditCardType)
  (canContain DrawerType KeyChainType)
  (canContain DrawerType LaptopType)
  (canContain DrawerType MugType)
  (canContain DrawerType PenType)
  (canContain DrawerType PencilType)
  (canContain DrawerType PillowType)
  (canContain DresserType AlarmClockType)
  (canContain DresserType BookType)
  (canContain DresserType CDType)
  (canContain DresserType CellPhoneType)
  (canContain DresserType CreditCardType)
  (canContain DresserType KeyChainType)
  (canContain DresserType LaptopType)
  (canContain DresserType MugType)
  (canContain DresserType PenType)
  (canContain DresserType PencilType)
  (canContain DresserType PillowType)
  (canContain GarbageCanType CDType)
  (canContain GarbageCanType CreditCardType)
  (canContain GarbageCanType PenType)
  (canContain GarbageCanType PencilType)
  (canContain SafeType AlarmClockType)
  (canContain SafeType BookType)
  (canContain SafeType CDType)
  (canContain SafeType CellPhoneType)
  (canContain SafeType CreditCardType)
  (canContain SafeType KeyChainType)
  (canContain SafeType LaptopType)
  (canContain SafeType MugType)
  (canContain SafeType PenType)
  (canContain SafeType PencilType)
  (canContain SafeType PillowType)
  (canContain ShelfType AlarmClockType)
  (canContain ShelfType BookType)
  (canContain ShelfType CDType)
  (canContain ShelfType CellPhoneType)
  (canContain ShelfType CreditCardType)
  (canContain ShelfType KeyChainType)
  (canContain ShelfType LaptopType)
  (canContain ShelfType MugType)
  (canContain ShelfType PenType)
  (canContain ShelfType PencilType)
  (canContain ShelfType PillowType)
  (canContain SideTableType AlarmClockType)
  (canContain SideTableType BookType)
  (canContain SideTableType CDType)
  (canContain SideTableType CellPhoneType)
  (canContain SideTableType CreditCardType)
  (canContain SideTableType KeyChainType)
  (canContain SideTableType LaptopType)
  (canContain SideTableType MugType)
  (canContain SideTableType PenType)
  (canContain SideTableType PencilType)
  (canContain SideTableType PillowType)
)
(:goal
                    (and
                        (exists (?r - receptacle)
                            (exists (?o1 - object)
                                (and
                                    (objectType ?o1 BookType)
                                    (receptacleType ?r DeskType)
                                    (inReceptacle ?o1 ?r)
                                    (exists (?o2 - object)
                                        (and
                                            (not (= ?o1 ?o2))
                                            (objectType ?o2 BookType)
                                            (receptacleType ?r DeskType)
                                            (inReceptacle ?o2 ?r)
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
