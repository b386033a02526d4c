;; Miconic (nextstate shipped domain; the IPC 2000 elevator domain as the
;; IPC 2023 Learning Track has it).
;;
;; A lift moves between floors; passengers board at their origin floor and
;; leave it at their destination, which serves them.  Boarding removes the
;; origin, so a served passenger never boards again.  (above ?f1 ?f2) says
;; ?f2 is higher than ?f1.  Problems name the domain `miconic`.

(define (domain miconic)
  (:requirements :strips :typing)

  (:types passenger floor - object)

  (:predicates
    (origin ?person - passenger ?floor - floor)  ; ?person waits at ?floor
    (destin ?person - passenger ?floor - floor)  ; static: ?person's exit
    (above ?floor1 - floor ?floor2 - floor)      ; static: ?floor2 is above ?floor1
    (boarded ?person - passenger)
    (served ?person - passenger)
    (lift-at ?floor - floor))

  ;; A passenger waiting where the lift is gets in.
  (:action board
    :parameters (?f - floor ?p - passenger)
    :precondition (and (lift-at ?f) (origin ?p ?f))
    :effect (and (boarded ?p) (not (origin ?p ?f))))

  ;; A boarded passenger leaves the lift at their destination.
  (:action depart
    :parameters (?f - floor ?p - passenger)
    :precondition (and (lift-at ?f) (destin ?p ?f) (boarded ?p))
    :effect (and (not (boarded ?p)) (served ?p)))

  ;; The lift goes up to any higher floor.
  (:action up
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f1 ?f2))
    :effect (and (lift-at ?f2) (not (lift-at ?f1))))

  ;; The lift goes down to any lower floor.
  (:action down
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift-at ?f1) (above ?f2 ?f1))
    :effect (and (lift-at ?f2) (not (lift-at ?f1)))))
