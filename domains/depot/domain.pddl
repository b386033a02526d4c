;; Depots (nextstate shipped domain).
;;
;; Hoists at depots and distributors stack crates on pallets or on other
;; crates and load them into trucks, which drive freely between places.
;; Problems name the domain `depots`.

(define (domain depots)
  (:requirements :strips :typing)

  (:types
    place locatable - object
    depot distributor - place
    truck hoist surface - locatable
    pallet crate - surface)

  (:predicates
    (at ?x - locatable ?y - place)     ; ?x is at place ?y
    (on ?x - crate ?y - surface)       ; crate ?x sits on ?y
    (in ?x - crate ?y - truck)         ; crate ?x is loaded in truck ?y
    (lifting ?x - hoist ?y - crate)    ; hoist ?x holds crate ?y
    (available ?x - hoist)             ; hoist ?x holds nothing
    (clear ?x - surface))              ; nothing is on ?x

  ;; A truck drives from place ?y to place ?z.
  (:action drive
    :parameters (?x - truck ?y - place ?z - place)
    :precondition (at ?x ?y)
    :effect (and (at ?x ?z) (not (at ?x ?y))))

  ;; Hoist ?x lifts the clear crate ?y off surface ?z at place ?p.
  (:action lift
    :parameters (?x - hoist ?y - crate ?z - surface ?p - place)
    :precondition (and (at ?x ?p) (available ?x) (at ?y ?p) (on ?y ?z) (clear ?y))
    :effect (and (lifting ?x ?y) (clear ?z)
                 (not (at ?y ?p)) (not (clear ?y)) (not (available ?x)) (not (on ?y ?z))))

  ;; Hoist ?x puts the crate ?y it holds onto the clear surface ?z at ?p.
  (:action drop
    :parameters (?x - hoist ?y - crate ?z - surface ?p - place)
    :precondition (and (at ?x ?p) (at ?z ?p) (clear ?z) (lifting ?x ?y))
    :effect (and (available ?x) (at ?y ?p) (clear ?y) (on ?y ?z)
                 (not (lifting ?x ?y)) (not (clear ?z))))

  ;; Hoist ?x puts the crate ?y it holds into truck ?z at ?p.
  (:action load
    :parameters (?x - hoist ?y - crate ?z - truck ?p - place)
    :precondition (and (at ?x ?p) (at ?z ?p) (lifting ?x ?y))
    :effect (and (in ?y ?z) (available ?x)
                 (not (lifting ?x ?y))))

  ;; Hoist ?x takes crate ?y out of truck ?z at ?p.
  (:action unload
    :parameters (?x - hoist ?y - crate ?z - truck ?p - place)
    :precondition (and (at ?x ?p) (at ?z ?p) (available ?x) (in ?y ?z))
    :effect (and (lifting ?x ?y)
                 (not (in ?y ?z)) (not (available ?x))))
)
