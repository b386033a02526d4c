;; Gold-miner, typed version (nextstate shipped domain).
;;
;; A robot in a grid mine must get hold of the gold.  Cells hold hard rock,
;; soft rock or nothing (clear).  The laser clears any adjacent cell but
;; also destroys gold there; a bomb clears only soft rock.  Bomb supplies
;; never run out.  The robot carries at most one item (arm-empty).
;; Problems name the domain `gold-miner-typed`.
;; Predicates and actions follow the ACPBench reference order.

(define (domain gold-miner-typed)
  (:requirements :typing)

  (:types loc)

  (:predicates
    (arm-empty)                      ; the robot carries nothing
    (bomb-at ?x - loc)               ; a bomb supply is at ?x
    (clear ?x - loc)                 ; ?x holds no rock
    (connected ?x - loc ?y - loc)    ; static: ?x and ?y are neighbours
    (gold-at ?x - loc)               ; the gold lies at ?x
    (hard-rock-at ?x - loc)
    (holds-bomb)
    (holds-gold)
    (holds-laser)
    (laser-at ?x - loc)              ; the laser lies at ?x
    (robot-at ?x - loc)
    (soft-rock-at ?x - loc))

  ;; Blow up the soft rock next to the robot; the bomb is used up.
  (:action detonate-bomb
    :parameters (?x - loc ?y - loc)
    :precondition (and (robot-at ?x) (holds-bomb) (connected ?x ?y) (soft-rock-at ?y))
    :effect (and (arm-empty) (clear ?y)
                 (not (holds-bomb)) (not (soft-rock-at ?y))))

  ;; Shoot the neighbouring cell: whatever was there is gone, gold included.
  (:action fire-laser
    :parameters (?x - loc ?y - loc)
    :precondition (and (robot-at ?x) (holds-laser) (connected ?x ?y))
    :effect (and (clear ?y)
                 (not (soft-rock-at ?y)) (not (gold-at ?y)) (not (hard-rock-at ?y))))

  (:action move
    :parameters (?x - loc ?y - loc)
    :precondition (and (robot-at ?x) (connected ?x ?y) (clear ?y))
    :effect (and (robot-at ?y) (not (robot-at ?x))))

  (:action pick-gold
    :parameters (?x - loc)
    :precondition (and (robot-at ?x) (arm-empty) (gold-at ?x))
    :effect (and (holds-gold) (not (arm-empty))))

  ;; Take a bomb from the supply (the supply stays).
  (:action pickup-bomb
    :parameters (?x - loc)
    :precondition (and (robot-at ?x) (bomb-at ?x) (arm-empty))
    :effect (and (holds-bomb) (not (arm-empty))))

  (:action pickup-laser
    :parameters (?x - loc)
    :precondition (and (robot-at ?x) (laser-at ?x) (arm-empty))
    :effect (and (holds-laser) (not (arm-empty)) (not (laser-at ?x))))

  (:action putdown-laser
    :parameters (?x - loc)
    :precondition (and (robot-at ?x) (holds-laser))
    :effect (and (arm-empty) (laser-at ?x) (not (holds-laser))))
)
